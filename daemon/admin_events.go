package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/profiler/store"
)

// eventFilterOf reads the filter of an events request: kind (repeated, or
// comma-separated), severity (the least one), model and after (a time, RFC
// 3339: the events from then on). A kind the daemon never writes, a
// severity it does not know or a time it cannot read is refused, so that a
// misspelt filter does not read as a quiet history.
func eventFilterOf(q url.Values) (store.EventFilter, error) {
	var f store.EventFilter
	for _, v := range q["kind"] {
		for k := range strings.SplitSeq(v, ",") {
			if k = strings.TrimSpace(k); k == "" {
				continue
			}
			if !slices.Contains(knownEventKinds, k) {
				return f, fmt.Errorf("unknown event kind %q: one of %s", k, strings.Join(knownEventKinds, ", "))
			}
			f.Kinds = append(f.Kinds, k)
		}
	}
	if s := q.Get("severity"); s != "" {
		sev, err := store.ParseSeverity(s)
		if err != nil {
			return f, err
		}
		f.MinSeverity = sev
	}
	f.Model = q.Get("model")
	if a := q.Get("after"); a != "" {
		t, err := time.Parse(time.RFC3339Nano, a)
		if err != nil {
			return f, fmt.Errorf("after %q: not a time as RFC 3339 writes it (2026-11-28T10:00:00Z)", a)
		}
		f.After = t
	}
	return f, nil
}

// handleAdminEvents lists events (listEvents); a query it cannot read is
// answered 400.
func (n *node) handleAdminEvents(w http.ResponseWriter, r *http.Request) {
	out, err := listEvents(r.Context(), n.st, n.events.pending(), r.URL.Query())
	switch {
	case errors.As(err, new(badEventQuery)):
		writeError(w, http.StatusBadRequest, err.Error())
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
	default:
		writeJSON(w, http.StatusOK, out)
	}
}

// badEventQuery is an events query that cannot be read: a 400, its message
// what is wrong.
type badEventQuery struct{ error }

// ListEvents lists the events of st as GET /api/v1/events does, for a
// database no daemon serves (gpuletd events when none answers).
func ListEvents(ctx context.Context, st *store.Store, q url.Values) ([]EventDoc, error) {
	return listEvents(ctx, st, nil, q)
}

// listEvents lists events: with ?since=ID those after it, oldest first (a
// reader pages forward), then the ones the store could not take yet
// (pending); without, the newest ones (as `journalctl -n` does), the
// unsaved last. ?limit= caps the list (default 100, at most
// MaxEventsListed); ?kind=, ?severity=, ?model= and ?after= pick the
// events listed (eventFilterOf), before the limit.
func listEvents(ctx context.Context, st *store.Store, pending []store.Event, q url.Values) ([]EventDoc, error) {
	f, err := eventFilterOf(q)
	if err != nil {
		return nil, badEventQuery{err}
	}
	limit := 100
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit <= 0 {
			return nil, badEventQuery{fmt.Errorf("limit %q: give a number of events, 1 to %d", v, MaxEventsListed)}
		}
		limit = min(limit, MaxEventsListed)
	}
	unsaved := slices.DeleteFunc(pending, func(e store.Event) bool { return !f.Match(e) })
	var evs []store.Event
	if s := q.Get("since"); s != "" {
		since, err := eventID(s)
		if err != nil {
			return nil, badEventQuery{err}
		}
		if evs, err = st.EventsMatching(ctx, since, limit, f); err != nil {
			return nil, err
		}
		unsaved = unsaved[:min(len(unsaved), limit-len(evs))]
	} else {
		unsaved = unsaved[max(len(unsaved)-limit, 0):]
		if room := limit - len(unsaved); room > 0 {
			if evs, err = st.LatestEventsMatching(ctx, room, f); err != nil {
				return nil, err
			}
		}
	}
	out := make([]EventDoc, 0, len(evs)+len(unsaved))
	for _, e := range evs {
		out = append(out, docOf(e))
	}
	// Events the store could not take yet follow, without an ID.
	for _, e := range unsaved {
		d := docOf(e)
		d.Unsaved = true
		out = append(out, d)
	}
	return out, nil
}

// MaxEventsListed is the most events one GET /api/v1/events lists (its
// ?limit= at most).
const MaxEventsListed = 1000

// eventID reads the ID a list or a stream resumes after.
func eventID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 0 {
		return 0, fmt.Errorf("since %q: not an event's ID (0 or more)", s)
	}
	return id, nil
}

// streamHistory is how many of the newest events a stream that does not
// resume sends before the live ones, and how many a resumed one reads from
// the history at a time.
const streamHistory = 1000

// handleAdminEventStream sends events as server-sent events, each named by
// its kind: the history after ?since= or Last-Event-ID, all of it —
// without either, the newest streamHistory events — then live ones, from
// the history again when the reader fell behind; only those the filter of
// ?kind=, ?severity=, ?model= and ?after= picks (eventFilterOf).
func (n *node) handleAdminEventStream(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming is not supported here")
		return
	}
	f, err := eventFilterOf(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// Where to resume: the later of ?since= and Last-Event-ID, which an
	// EventSource sends when it reconnects by itself to the URL (and the
	// ?since= in it) it was made with.
	var since int64
	resume := false
	for _, from := range []string{r.URL.Query().Get("since"), r.Header.Get("Last-Event-ID")} {
		if from == "" {
			continue
		}
		id, err := eventID(from)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		since, resume = max(since, id), true
	}
	sub := n.events.subscribe()
	defer n.events.unsubscribe(sub)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	// A reverse proxy in front (nginx) passes each event on at once
	// rather than buffer the stream.
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(e store.Event) {
		b, _ := json.Marshal(docOf(e))
		if e.ID != 0 {
			// Not for an event kept unsaved: an EventSource would resume
			// from 0, the whole history, after it.
			fmt.Fprintf(w, "id: %d\n", e.ID)
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Kind, b)
		since = max(since, e.ID)
	}
	// catchUp sends the history after since, a page at a time.
	catchUp := func() {
		for {
			evs, err := n.st.EventsMatching(r.Context(), since, streamHistory, f)
			if err != nil {
				return
			}
			for _, e := range evs {
				send(e)
			}
			if len(evs) < streamHistory {
				return
			}
		}
	}
	if !resume {
		if history, err := n.st.LatestEventsMatching(r.Context(), streamHistory, f); err == nil {
			for _, e := range history {
				send(e)
			}
		}
	} else {
		catchUp()
	}
	fl.Flush()
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case e, ok := <-sub.ch:
			if !ok {
				return // the daemon stops
			}
			if (e.ID == 0 || e.ID > since) && f.Match(e) {
				send(e)
			}
			if sub.lagged.Swap(false) {
				// Events were left out of the channel after those in it:
				// the store has them.
				catchUp()
			}
			fl.Flush()
		case <-keepAlive.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			fl.Flush()
		}
	}
}

// EventDoc is an event as the admin API shows it (GET /api/v1/events and its
// stream), and as gpuletd events reads it.
type EventDoc struct {
	ID       int64             `json:"id"`
	At       time.Time         `json:"at"`
	Kind     string            `json:"kind"`
	Severity string            `json:"severity"`
	Message  string            `json:"message"`
	Attrs    map[string]string `json:"attrs,omitempty"`
	// Unsaved marks an event kept in memory because the store could not
	// be written when it happened.
	Unsaved bool `json:"unsaved,omitempty"`
}

func docOf(e store.Event) EventDoc {
	return EventDoc{ID: e.ID, At: e.At, Kind: e.Kind, Severity: string(e.Severity), Message: e.Message, Attrs: e.Attrs}
}
