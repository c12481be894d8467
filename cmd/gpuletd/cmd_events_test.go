package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/profiler/store"
)

func TestEventLine(t *testing.T) {
	at := time.Date(2026, 11, 28, 11, 5, 37, 0, time.UTC)
	tests := []struct {
		name string
		e    daemon.EventDoc
		want string
	}{
		{"attributes by name, quoted where they hold spaces",
			daemon.EventDoc{ID: 412, At: at, Kind: "executor_restart", Severity: "warning", Message: "executor exited; restarting it",
				Attrs: map[string]string{"gpulet": "cpu-100-0", "exit": "exit status 2", "backoff": "1s", "empty": ""}},
			`2026-11-28 11:05:37 #412 warning executor_restart: executor exited; restarting it (backoff=1s empty="" exit="exit status 2" gpulet=cpu-100-0)`},
		{"none", daemon.EventDoc{ID: 3, At: at, Kind: "store", Severity: "info", Message: "written again"},
			"2026-11-28 11:05:37 #3 info store: written again"},
		{"unsaved", daemon.EventDoc{At: at, Kind: "store", Severity: "error", Message: "disk full", Unsaved: true},
			"2026-11-28 11:05:37 (unsaved) error store: disk full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, eventLine(tt.e, time.UTC, false))
		})
	}
	require.Equal(t, "2026-11-28 12:05:37 #3 info store: x",
		eventLine(daemon.EventDoc{ID: 3, At: at, Kind: "store", Severity: "info", Message: "x"}, time.FixedZone("CET", 3600), false), "in the reader's zone")
	require.Equal(t, "2026-11-28 11:05:37 #3 \x1b[1;31merror\x1b[0m store: \x1b[1;31mdisk full\x1b[0m (path=/var)",
		eventLine(daemon.EventDoc{ID: 3, At: at, Kind: "store", Severity: "error", Message: "disk full", Attrs: map[string]string{"path": "/var"}}, time.UTC, true),
		"on a terminal, an error in red")
	require.Equal(t, "2026-11-28 11:05:37 #3 info store: x",
		eventLine(daemon.EventDoc{ID: 3, At: at, Kind: "store", Severity: "info", Message: "x"}, time.UTC, true), "an info as it is")
}

// fakeHistory answers GET /api/v1/events from count events (ids 1..count,
// every fifth a warning) and unsaved ones after them, as the daemon does,
// ignoring any filter (as a daemon from before the filter): the command
// must filter again.
type fakeHistory struct {
	count   int
	unsaved int
	asked   []string
}

func (h *fakeHistory) event(id int) daemon.EventDoc {
	sev := "info"
	if id%5 == 0 {
		sev = "warning"
	}
	return daemon.EventDoc{ID: int64(id), At: time.Unix(int64(id), 0), Kind: "plan", Severity: sev, Message: "e" + strconv.Itoa(id)}
}

func (h *fakeHistory) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.asked = append(h.asked, r.URL.RawQuery)
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	var out []daemon.EventDoc
	if s := q.Get("since"); s != "" {
		since, _ := strconv.Atoi(s)
		for id := since + 1; id <= h.count && len(out) < limit; id++ {
			out = append(out, h.event(id))
		}
		for i := 0; i < h.unsaved && len(out) < limit; i++ {
			out = append(out, daemon.EventDoc{Kind: "store", Severity: "error", Message: "u" + strconv.Itoa(i+1), Unsaved: true})
		}
	} else {
		room := max(limit-h.unsaved, 0)
		for id := max(h.count-room+1, 1); id <= h.count; id++ {
			out = append(out, h.event(id))
		}
		for i := max(h.unsaved-limit, 0); i < h.unsaved; i++ {
			out = append(out, daemon.EventDoc{Kind: "store", Severity: "error", Message: "u" + strconv.Itoa(i+1), Unsaved: true})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// messages are the messages of the lines printed, in order.
func messages(out string) []string {
	var msgs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if _, m, ok := strings.Cut(l, ": "); ok {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

func TestListEvents(t *testing.T) {
	tests := []struct {
		name      string
		history   fakeHistory
		flags     eventsFlags
		filter    store.EventFilter
		want      []string
		wantLast  int64
		wantCalls int
	}{
		{"the newest", fakeHistory{count: 30}, eventsFlags{lines: 3, since: -1}, store.EventFilter{},
			[]string{"e28", "e29", "e30"}, 30, 1},
		{"-n 0 prints none, learns where the history ends", fakeHistory{count: 30}, eventsFlags{lines: 0, since: -1}, store.EventFilter{},
			nil, 30, 1},
		{"the newest all unsaved: the last saved is found further back", fakeHistory{count: 30, unsaved: 4}, eventsFlags{lines: 2, since: -1}, store.EventFilter{},
			[]string{"u3", "u4"}, 30, 2},
		{"filtered again here", fakeHistory{count: 30}, eventsFlags{lines: 5, since: -1}, store.EventFilter{MinSeverity: store.SeverityWarning},
			[]string{"e30"}, 30, 1},
		{"since pages through more than one answer holds", fakeHistory{count: 2500, unsaved: 2}, eventsFlags{since: 2490}, store.EventFilter{},
			[]string{"e2491", "e2492", "e2493", "e2494", "e2495", "e2496", "e2497", "e2498", "e2499", "e2500", "u1", "u2"}, 2500, 1},
		{"the last -n of those since an ID", fakeHistory{count: 2500, unsaved: 2}, eventsFlags{since: 0, tail: 3}, store.EventFilter{},
			[]string{"e2500", "u1", "u2"}, 2500, 3},
		{"the last -n of those since a moment", fakeHistory{count: 2500}, eventsFlags{since: -1, after: time.Unix(1, 0), tail: 2},
			store.EventFilter{After: time.Unix(1, 0)}, []string{"e2499", "e2500"}, 2500, 3},
		{"from a moment on, paged from the start", fakeHistory{count: 2500, unsaved: 1}, eventsFlags{since: -1, after: time.Unix(2496, 0)},
			store.EventFilter{After: time.Unix(2496, 0)}, []string{"e2496", "e2497", "e2498", "e2499", "e2500"}, 2500, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.history
			srv := httptest.NewServer(&h)
			defer srv.Close()
			var b strings.Builder
			last, err := listEvents(context.Background(), daemonEvents{plainAPI(srv.URL)}, &tt.flags, eventPrinter{w: &b, loc: time.UTC, filter: tt.filter})
			require.NoError(t, err)
			require.Equal(t, tt.want, messages(b.String()))
			require.Equal(t, tt.wantLast, last)
			require.Len(t, h.asked, tt.wantCalls, "%v", h.asked)
		})
	}

	// From the start, every event once and in order, over three pages, the
	// unsaved ones after the last.
	h := fakeHistory{count: 2500, unsaved: 2}
	srv := httptest.NewServer(&h)
	defer srv.Close()
	var b strings.Builder
	last, err := listEvents(context.Background(), daemonEvents{plainAPI(srv.URL)}, &eventsFlags{since: 0}, eventPrinter{w: &b, loc: time.UTC})
	require.NoError(t, err)
	require.Equal(t, int64(2500), last)
	msgs := messages(b.String())
	require.Len(t, msgs, 2502)
	for i, m := range msgs[:2500] {
		require.Equal(t, "e"+strconv.Itoa(i+1), m)
	}
	require.Equal(t, []string{"u1", "u2"}, msgs[2500:])
	require.Equal(t, []string{"limit=1000&since=0", "limit=1000&since=1000", "limit=1000&since=2000"}, h.asked)
}

// A follow resumes after the last event it printed when the stream ends or
// the daemon goes away, says so once and when it is back, and stops at a
// refusal (asking again would change nothing).
func TestFollowEvents(t *testing.T) {
	var (
		mu     sync.Mutex
		asked  []string
		down   bool
		served int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Query().Get("since"))
		n, isDown := served, down
		served++
		mu.Unlock()
		switch {
		case r.URL.Query().Get("severity") == "fatal":
			http.Error(w, `{"error":"unknown severity \"fatal\""}`, http.StatusBadRequest)
			return
		case isDown:
			http.Error(w, "down", http.StatusBadGateway) // a proxy's answer: asked again
			return
		}
		since, _ := strconv.Atoi(r.URL.Query().Get("since"))
		w.Header().Set("Content-Type", "text/event-stream")
		// Two events after since, then the stream ends (a daemon stopping).
		for id := since + 1; id <= since+2; id++ {
			b, _ := json.Marshal(daemon.EventDoc{ID: int64(id), At: time.Unix(0, 0), Kind: "plan", Severity: "info", Message: "e" + strconv.Itoa(id)})
			fmt.Fprintf(w, "id: %d\nevent: plan\ndata: %s\n\n: keep-alive\n\n", id, b)
		}
		if n == 1 {
			mu.Lock()
			down = true // after the second stream, down for a while
			mu.Unlock()
			go func() {
				time.Sleep(50 * time.Millisecond)
				mu.Lock()
				down = false
				mu.Unlock()
			}()
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, notes testbin.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- followEvents(ctx, plainAPI(srv.URL), map[string][]string{}, 7, eventPrinter{w: &out, loc: time.UTC}, &notes, 10*time.Millisecond)
	}()
	require.Eventually(t, func() bool { return len(messages(out.String())) >= 6 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	require.NoError(t, <-done, "interrupted is no failure")
	require.Equal(t, []string{"e8", "e9", "e10", "e11", "e12", "e13"}, messages(out.String())[:6], "every event once, in order")
	mu.Lock()
	require.Equal(t, []string{"7", "9", "11", "11"}, asked[:4], "resumed after the last printed, and from there again while down")
	mu.Unlock()
	n := notes.String()
	// Each stream here ends: one note when it does, none for the refused
	// tries after it, one when a stream is open again.
	gone, back := strings.Count(n, "stopped answering (the stream ended); waiting for it"), strings.Count(n, "answers again")
	require.GreaterOrEqual(t, back, 2, n)
	require.Contains(t, []int{back, back + 1}, gone, n)
	require.NotContains(t, n, "502", "the tries while it was down are not said one by one")

	err := followEvents(context.Background(), plainAPI(srv.URL), map[string][]string{"severity": {"fatal"}}, 0, eventPrinter{w: &out, loc: time.UTC}, &notes, time.Millisecond)
	require.ErrorContains(t, err, `answered 400 Bad Request: unknown severity "fatal"`)

	// Where the events go fails (a full disk under a redirection): the
	// follow ends saying so, rather than waiting for a daemon that answers.
	err = followEvents(context.Background(), plainAPI(srv.URL), map[string][]string{}, 7, eventPrinter{w: failingWriter{}, loc: time.UTC}, &notes, time.Millisecond)
	require.EqualError(t, err, "print events: write: no space left on device")
}

// failingWriter fails every write, as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) {
	return 0, errors.New("write: no space left on device")
}

func TestParseSince(t *testing.T) {
	zone := time.FixedZone("CET", 3600)
	now := time.Date(2026, 11, 28, 11, 5, 37, 0, zone)
	tests := []struct {
		in    string
		id    int64
		after time.Time
	}{
		{"412", 412, time.Time{}},
		{"0", 0, time.Time{}},
		{"90m", -1, now.Add(-90 * time.Minute)},
		{"2d", -1, now.Add(-48 * time.Hour)},
		{"0.5d", -1, now.Add(-12 * time.Hour)},
		{"today", -1, time.Date(2026, 11, 28, 0, 0, 0, 0, zone)},
		{"yesterday", -1, time.Date(2026, 11, 27, 0, 0, 0, 0, zone)},
		{"10:00", -1, time.Date(2026, 11, 28, 10, 0, 0, 0, zone)},
		{"10:00:30", -1, time.Date(2026, 11, 28, 10, 0, 30, 0, zone)},
		{"2026-11-27 09:30", -1, time.Date(2026, 11, 27, 9, 30, 0, 0, zone)},
		{"2026-11-27 09:30:15", -1, time.Date(2026, 11, 27, 9, 30, 15, 0, zone)},
		{"2026-11-27", -1, time.Date(2026, 11, 27, 0, 0, 0, 0, zone)},
		{"2026-11-27T09:30:00Z", -1, time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			id, after, err := parseSince(tt.in, now)
			require.NoError(t, err)
			require.Equal(t, tt.id, id)
			require.True(t, tt.after.Equal(after), "%v, want %v", after, tt.after)
		})
	}
	for _, bad := range []string{"", "-5", "-1h", "soon", "25:00", "2026-13-01"} {
		_, _, err := parseSince(bad, now)
		require.ErrorContains(t, err, "give an event's ID (412), a time back from now", bad)
	}
}
