package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/profiler/store"
)

// eventsNode is a node whose store holds n events, ids 1..n.
func eventsNode(t *testing.T, count int) *node {
	t.Helper()
	n, st := historyNode(t)
	for i := range count {
		_, err := st.AppendEvent(context.Background(), store.Event{Kind: EventPlan, Severity: store.SeverityInfo, Message: "e" + strconv.Itoa(i+1)})
		require.NoError(t, err)
	}
	return n
}

// askEventList asks n for GET /api/v1/events with query.
func askEventList(t *testing.T, n *node, query string) []EventDoc {
	t.Helper()
	rec := httptest.NewRecorder()
	n.handleAdminEvents(rec, httptest.NewRequest(http.MethodGet, "/api/v1/events"+query, nil))
	require.Equal(t, http.StatusOK, rec.Code)
	var got []EventDoc
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	return got
}

// GET /api/v1/events shows the end of the history, as `journalctl -n`
// does; with ?since= it pages forward from there. It showed the oldest
// events, so a daemon with a long history never listed what just happened.
func TestEventsListTheNewestUnlessAskedSince(t *testing.T) {
	n := eventsNode(t, 150)
	tests := []struct {
		query       string
		first, last int64
	}{
		{"", 51, 150},
		{"?limit=10", 141, 150},
		{"?limit=5000", 1, 150}, // at most 1000
		{"?since=0", 1, 100},
		{"?since=0&limit=1000", 1, 150},
		{"?since=140", 141, 150},
		{"?since=150", 0, 0},
	}
	for _, tt := range tests {
		t.Run("events"+tt.query, func(t *testing.T) {
			got := askEventList(t, n, tt.query)
			if tt.first == 0 {
				require.Empty(t, got)
				return
			}
			require.Equal(t, tt.first, got[0].ID)
			require.Equal(t, tt.last, got[len(got)-1].ID)
			require.Len(t, got, int(tt.last-tt.first+1), "oldest first, none missing")
		})
	}
}

// The event stream starts with the newest streamHistory events (the admin
// page's list), or all those after Last-Event-ID when it reconnects (it
// sent the first streamHistory of them, then live ones: a gap).
func TestEventStreamStartsAtTheEndOfTheHistory(t *testing.T) {
	n := eventsNode(t, streamHistory+20)
	srv := httptest.NewServer(http.HandlerFunc(n.handleAdminEventStream))
	defer srv.Close()
	tests := []struct {
		name        string
		query       string
		lastEventID string
		first       int64
		count       int
	}{
		{"a new page", "", "", 21, streamHistory},
		{"a reconnect", "", strconv.Itoa(streamHistory + 10), streamHistory + 11, 10},
		{"from the start: all of it, over more than a page", "", "0", 1, streamHistory + 20},
		{"asked from an ID", "?since=" + strconv.Itoa(streamHistory+15), "", streamHistory + 16, 5},
		{"an EventSource's own reconnect to a URL with an older ID", "?since=5", strconv.Itoa(streamHistory + 18), streamHistory + 19, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+tt.query, nil)
			require.NoError(t, err)
			if tt.lastEventID != "" {
				req.Header.Set("Last-Event-ID", tt.lastEventID)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var ids []int64
			sc := bufio.NewScanner(resp.Body)
			for len(ids) < tt.count && sc.Scan() {
				if v, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
					id, err := strconv.ParseInt(v, 10, 64)
					require.NoError(t, err)
					ids = append(ids, id)
				}
			}
			require.Len(t, ids, tt.count)
			require.Equal(t, tt.first, ids[0])
			require.Equal(t, int64(streamHistory+20), ids[len(ids)-1])
		})
	}
}

// Events the store could not take (a full disk) are listed after the saved
// ones, marked unsaved; the newest come first to go when the list is full.
// Once they outnumbered ?limit=, a list without ?since= held the whole
// history.
func TestEventsListHoldsTheUnsavedLast(t *testing.T) {
	n := eventsNode(t, 30)
	n.events.mu.Lock()
	for i := range 8 {
		n.events.unsaved = append(n.events.unsaved, store.Event{Kind: EventStore, Severity: store.SeverityError, Message: "u" + strconv.Itoa(i+1)})
	}
	n.events.mu.Unlock()
	tests := []struct {
		query string
		want  []string // messages, in order
	}{
		{"?limit=10", []string{"e29", "e30", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"}},
		{"?limit=5", []string{"u4", "u5", "u6", "u7", "u8"}},
		{"?limit=8", []string{"u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"}},
		{"?since=27&limit=5", []string{"e28", "e29", "e30", "u1", "u2"}},
		{"?since=30&limit=3", []string{"u1", "u2", "u3"}},
	}
	for _, tt := range tests {
		t.Run("events"+tt.query, func(t *testing.T) {
			got := askEventList(t, n, tt.query)
			var msgs []string
			for _, e := range got {
				msgs = append(msgs, e.Message)
				require.Equal(t, strings.HasPrefix(e.Message, "u"), e.Unsaved, e.Message)
			}
			require.Equal(t, tt.want, msgs)
		})
	}
}

// askEvents asks n for GET /api/v1/events with query and returns the
// answer's code and body.
func askEvents(n *node, query string) (int, string) {
	rec := httptest.NewRecorder()
	n.handleAdminEvents(rec, httptest.NewRequest(http.MethodGet, "/api/v1/events"+query, nil))
	return rec.Code, rec.Body.String()
}

// filteredNode is a node with 40 plan events, then a warning restart of
// an executor serving bert and resnet50, a model_load of bert, then 20
// more plan events, and one unsaved store error.
func filteredNode(t *testing.T) *node {
	t.Helper()
	n := eventsNode(t, 40)
	ctx := context.Background()
	for _, e := range []store.Event{
		{Kind: EventExecutorRestart, Severity: store.SeverityWarning, Message: "restart", Attrs: map[string]string{"gpulet": "g1", "models": "bert,resnet50"}},
		{Kind: EventModelLoad, Severity: store.SeverityInfo, Message: "load bert", Attrs: map[string]string{"model": "bert"}, At: time.Now().Add(time.Hour)},
	} {
		_, err := n.st.AppendEvent(ctx, e)
		require.NoError(t, err)
	}
	for i := range 20 {
		_, err := n.st.AppendEvent(ctx, store.Event{Kind: EventPlan, Severity: store.SeverityInfo, Message: "p" + strconv.Itoa(i+1), At: time.Now().Add(2 * time.Hour)})
		require.NoError(t, err)
	}
	n.events.mu.Lock()
	n.events.unsaved = append(n.events.unsaved, store.Event{Kind: EventStore, Severity: store.SeverityError, Message: "unsaved"})
	n.events.mu.Unlock()
	return n
}

// filteredAfter is a moment between filteredNode's restart and its load of
// bert, as ?after= is given.
var filteredAfter = url.QueryEscape(time.Now().Add(30 * time.Minute).Format(time.RFC3339Nano))

// ?kind=, ?severity=, ?model= and ?after= pick the events before the limit counts
// them, so "the last two warnings" are two warnings however many other
// events came after them; the unsaved ones are picked the same way.
func TestEventsListFiltered(t *testing.T) {
	n := filteredNode(t)
	tests := []struct {
		query string
		want  []string
	}{
		{"?limit=3", []string{"p19", "p20", "unsaved"}},
		{"?severity=warning&limit=2", []string{"restart", "unsaved"}},
		{"?severity=error", []string{"unsaved"}},
		{"?kind=executor_restart,model_load&limit=5", []string{"restart", "load bert"}},
		{"?kind=executor_restart&kind=store", []string{"restart", "unsaved"}},
		{"?model=bert", []string{"restart", "load bert"}},
		{"?model=resnet50&since=0", []string{"restart"}},
		{"?model=bert&since=41", []string{"load bert"}},
		{"?kind=plan&since=40&limit=2", []string{"p1", "p2"}},
		{"?model=vgg19", nil},
		{"?since=0&after=" + filteredAfter + "&limit=3", []string{"load bert", "p1", "p2"}},
		{"?after=" + filteredAfter + "&limit=2", []string{"p19", "p20"}},
	}
	for _, tt := range tests {
		t.Run("events"+tt.query, func(t *testing.T) {
			var msgs []string
			for _, e := range askEventList(t, n, tt.query) {
				msgs = append(msgs, e.Message)
			}
			require.Equal(t, tt.want, msgs)
		})
	}
}

// A filter that names a kind the daemon never writes, or a severity it
// does not know, and a malformed ID or limit are refused with what they
// may be, not answered with an empty history or the default list.
func TestEventsFilterRefusesUnknownNames(t *testing.T) {
	n := filteredNode(t)
	for _, tt := range []struct{ query, want string }{
		{"?kind=executor_restarts", `unknown event kind \"executor_restarts\": one of reorganize, executor_start`},
		{"?kind=plan,,bogus", `unknown event kind \"bogus\"`},
		{"?severity=warn", `unknown severity \"warn\": one of debug, info, warning, error`},
		{"?since=12x", `since \"12x\": not an event's ID (0 or more)`},
		{"?since=-3", `since \"-3\": not an event's ID (0 or more)`},
		{"?limit=ten", `limit \"ten\": give a number of events, 1 to 1000`},
		{"?limit=0", `limit \"0\": give a number of events, 1 to 1000`},
		{"?after=yesterday", `after \"yesterday\": not a time as RFC 3339 writes it (2026-11-28T10:00:00Z)`},
	} {
		t.Run(tt.query, func(t *testing.T) {
			code, body := askEvents(n, tt.query)
			require.Equal(t, http.StatusBadRequest, code)
			require.Contains(t, body, tt.want)
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(n.handleAdminEventStream))
	defer srv.Close()
	for _, q := range []string{"?severity=fatal", "?since=x"} {
		resp, err := http.Get(srv.URL + q)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "the stream refuses %s too", q)
	}
}

// The stream sends only what its filter picks, from the history and live.
func TestEventStreamFiltered(t *testing.T) {
	n := filteredNode(t)
	srv := httptest.NewServer(http.HandlerFunc(n.handleAdminEventStream))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"?model=bert", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	next := func() EventDoc {
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var d EventDoc
				require.NoError(t, json.Unmarshal([]byte(v), &d))
				return d
			}
		}
		require.FailNow(t, "the stream ended", "%v", sc.Err())
		return EventDoc{}
	}
	require.Equal(t, "restart", next().Message)
	require.Equal(t, "load bert", next().Message)
	// Once subscribed (the history is sent after it), a live event of
	// another model is left out, one of bert's sent.
	n.events.add(EventModelLoad, store.SeverityInfo, "load vgg19", map[string]string{"model": "vgg19"})
	n.events.add(EventModelUnload, store.SeverityInfo, "unload bert", map[string]string{"model": "bert"})
	require.Equal(t, "unload bert", next().Message)
}

// gatedWriter is a streaming ResponseWriter whose writes wait until its
// gate opens: a reader that has fallen behind.
type gatedWriter struct {
	header http.Header
	gate   chan struct{}
	mu     sync.Mutex
	buf    strings.Builder
}

func (g *gatedWriter) Header() http.Header { return g.header }
func (g *gatedWriter) WriteHeader(int)     {}
func (g *gatedWriter) Flush()              {}

func (g *gatedWriter) Write(p []byte) (int, error) {
	<-g.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

func (g *gatedWriter) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.String()
}

// streamTo serves n's event stream into w until the events' subscriptions
// end, and returns once it has subscribed; the channel is closed when the
// handler has returned.
func streamTo(t *testing.T, n *node, w http.ResponseWriter) chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.handleAdminEventStream(w, httptest.NewRequest(http.MethodGet, "/api/v1/events/stream", nil))
	}()
	require.Eventually(t, func() bool {
		n.events.mu.Lock()
		defer n.events.mu.Unlock()
		return len(n.events.subs) == 1
	}, 10*time.Second, time.Millisecond)
	return done
}

// A stream whose reader falls behind (more events than its channel holds
// came while it could not write) sends the ones left out from the
// history: every event once, in order. They were lost before.
func TestEventStreamCatchesUpAfterFallingBehind(t *testing.T) {
	n := eventsNode(t, 3)
	w := &gatedWriter{header: http.Header{}, gate: make(chan struct{})}
	done := streamTo(t, n, w)
	const more = 200 // over the channel's 64
	for i := range more {
		n.events.add(EventPlan, store.SeverityInfo, "live "+strconv.Itoa(i), nil)
	}
	close(w.gate)
	last := "id: " + strconv.Itoa(3+more) + "\n"
	require.Eventually(t, func() bool { return strings.Contains(w.String(), last) }, 10*time.Second, time.Millisecond)
	n.events.endSubscriptions()
	<-done
	require.Equal(t, "text/event-stream", w.header.Get("Content-Type"))
	require.Equal(t, "no", w.header.Get("X-Accel-Buffering"), "a proxy in front does not buffer the stream")
	var ids []int
	for _, l := range strings.Split(w.String(), "\n") {
		if v, ok := strings.CutPrefix(l, "id: "); ok {
			id, err := strconv.Atoi(v)
			require.NoError(t, err)
			ids = append(ids, id)
		}
	}
	require.Len(t, ids, 3+more, "every event once")
	for i, id := range ids {
		require.Equal(t, i+1, id, "in order")
	}
}

// An event kept unsaved (no ID yet) goes out without an id: line, so that
// an EventSource does not resume from 0, the whole history, after it.
func TestEventStreamSendsNoIDForAnUnsavedEvent(t *testing.T) {
	n := eventsNode(t, 2)
	w := &gatedWriter{header: http.Header{}, gate: make(chan struct{})}
	close(w.gate)
	done := streamTo(t, n, w)
	n.events.mu.Lock()
	for sub := range n.events.subs {
		sub.ch <- store.Event{Kind: EventStore, Severity: store.SeverityError, Message: "kept unsaved"}
	}
	n.events.mu.Unlock()
	require.Eventually(t, func() bool { return strings.Contains(w.String(), "kept unsaved") }, 10*time.Second, time.Millisecond)
	n.events.endSubscriptions()
	<-done
	require.Contains(t, w.String(), "id: 2\nevent: plan\n")
	require.Contains(t, w.String(), "\n\nevent: store\ndata: ", "no id: line before it")
	require.NotContains(t, w.String(), "id: 0")
}
