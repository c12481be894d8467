package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/internal/dirlock"
	"github.com/gpulet/gpuletd/profiler/store"
)

// With no daemon answering at the configured address, status says how
// its last run ended, from state_dir's database, as systemctl status says
// when and how a unit stopped: a stop, a run that recorded none (killed,
// crashed), or a daemon that holds the folder and does not answer.
func TestStatusSaysHowTheLastRunEnded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, store.FileName)
	addr := freeAddr(t)
	t.Setenv("GPULETD_LISTEN", addr)
	t.Setenv("GPULETD_STATE_DIR", dir)
	record := func(evs ...store.Event) {
		st, err := store.Open(ctx, path)
		require.NoError(t, err)
		for _, ev := range evs {
			_, err := st.AppendEvent(ctx, ev)
			require.NoError(t, err)
		}
		require.NoError(t, st.Close())
	}
	noDaemon := "no gpuletd answers at http://" + addr + ": is it running?\n"
	t0 := time.Date(2026, 12, 2, 5, 0, 0, 0, time.Local)

	record(store.Event{At: t0, Kind: daemon.EventPlan, Message: "a plan"})
	code, _, stderr := runCLI(t, "status")
	require.Equal(t, 1, code)
	require.Equal(t, noDaemon, stderr, "a history with no start or stop says nothing more")

	record(store.Event{At: t0.Add(time.Minute), Kind: daemon.EventDaemonStart, Message: "gpuletd v2 started (pid 41)", Attrs: map[string]string{"version": "v2", "pid": "41"}},
		store.Event{At: t0.Add(3 * time.Minute), Kind: daemon.EventReorganize, Message: "plan applied: cpu: 100%[mlp×1@1/s]"})
	code, _, stderr = runCLI(t, "status")
	require.Equal(t, 1, code)
	require.Equal(t, noDaemon+"its database ("+path+") says: gpuletd v2 (pid 41) started at 2026-12-02 05:01:00 and recorded no stop: "+
		"it was killed, crashed, or the machine went down, after its last event, at 2026-12-02 05:03:00: reorganize: plan applied: cpu: 100%[mlp×1@1/s] "+
		"(its log may say which: journalctl -u gpuletd); gpuletd events shows what came before\n", stderr, "a start of no known boot")

	record(store.Event{At: t0.Add(5 * time.Minute), Kind: daemon.EventDaemonStop, Message: "gpuletd stopped after 4m0s (terminated signal received)"})
	code, _, stderr = runCLI(t, "status", "--short")
	require.Equal(t, 1, code)
	require.Equal(t, noDaemon+"its database ("+path+") says: 2026-12-02 05:05:00 gpuletd stopped after 4m0s (terminated signal received); "+
		"gpuletd events shows what came before\n", stderr)

	code, _, stderr = runCLI(t, "status", "--url", addr)
	require.Equal(t, 1, code)
	require.Equal(t, noDaemon, stderr, "a daemon asked for by --url: not the configured one's folder")

	lock, err := dirlock.Lock(dir)
	require.NoError(t, err)
	code, _, stderr = runCLI(t, "status")
	require.NoError(t, lock.Close())
	require.Equal(t, 1, code)
	require.Equal(t, noDaemon+"a gpuletd holds its state_dir ("+dir+") but does not answer at http://"+addr+
		": it is still starting, hung, or listens elsewhere (its log may say which)\n", stderr)
}

// A daemon that takes the connection and never answers (stopped, hung) is
// named so, not "context deadline exceeded".
func TestStatusOfAHungDaemon(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	was := adminTimeout
	adminTimeout = 200 * time.Millisecond
	defer func() { adminTimeout = was }()
	code, _, stderr := runCLI(t, "status", "--url", srv.URL)
	require.Equal(t, 1, code)
	require.Equal(t, "gpuletd at "+srv.URL+" took the connection but did not answer within 200ms: it is hung or swamped (its log may say which)\n", stderr)
}
