package mps

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Min: 10 * time.Millisecond, Max: 70 * time.Millisecond}
	var got []time.Duration
	for n := 1; n <= 6; n++ {
		got = append(got, b.Delay(n))
	}
	require.Equal(t, []time.Duration{10, 20, 40, 70, 70, 70}, scale(got, time.Millisecond))
	require.Equal(t, time.Second, Backoff{Min: time.Second, Max: time.Second}.Delay(9))
}

func scale(ds []time.Duration, unit time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / unit
	}
	return out
}

// supervised starts a daemon and a supervisor over it; stop ends the
// supervisor (and waits for it) and quits the daemon.
func supervised(t *testing.T, f fakeMPS, id string, change func(*ControlConfig), backoff Backoff) (*ControlDaemon, *Supervisor, *observer.ObservedLogs, func()) {
	t.Helper()
	d := newTestDaemon(t, f, id, change)
	require.NoError(t, d.Start(context.Background()))
	core, logs := observer.New(zapcore.InfoLevel)
	sup := NewSupervisor(d, 20*time.Millisecond, backoff, zap.New(core))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { sup.Run(ctx) })
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		wg.Wait()
		require.NoError(t, d.Quit(context.Background()))
	}
	t.Cleanup(stop)
	return d, sup, logs, stop
}

func backoffs(logs *observer.ObservedLogs) []time.Duration {
	var out []time.Duration
	for _, e := range logs.FilterMessage("restarting MPS control daemon").All() {
		out = append(out, e.ContextMap()["backoff"].(time.Duration))
	}
	return out
}

func TestSupervisorRestartsADaemonThatDies(t *testing.T) {
	for _, fg := range []bool{false, true} {
		t.Run(map[bool]string{false: "daemonized", true: "foreground"}[fg], func(t *testing.T) {
			f := newFakeMPS(t)
			f.set(t, "die-after", "300ms") // the first daemon crashes; the file is consumed
			_, sup, logs, stop := supervised(t, f, "gpu0", func(c *ControlConfig) { c.Foreground = fg },
				Backoff{Min: 10 * time.Millisecond, Max: time.Minute})

			eventually(t, func() bool { return sup.Status().Restarts == 1 && sup.Status().State == MPSRunning }, "restarted")
			require.Equal(t, 1, f.count(t, "die"))
			require.Equal(t, 2, f.count(t, "start"))
			require.Equal(t, 1, logs.FilterMessage("MPS control daemon does not answer; restarting it").Len())
			require.Equal(t, []time.Duration{10 * time.Millisecond}, backoffs(logs))
			restarted := logs.FilterMessage("MPS control daemon restarted").All()
			require.Len(t, restarted, 1)
			require.Equal(t, int64(1), restarted[0].ContextMap()["attempt"])
			st := sup.Status()
			require.Contains(t, st.LastError, "get_server_list")

			stop()
			require.Equal(t, 1, f.count(t, "quit"), "the restarted daemon is the one quit")
		})
	}
}

// TestSupervisorTrimsLogs: a log in the daemon's folder past MaxLog is
// moved aside while the daemon runs (a foreground daemon's, into which it
// goes on writing).
func TestSupervisorTrimsLogs(t *testing.T) {
	f := newFakeMPS(t)
	_, logDir := f.dirs("gpu0")
	supervised(t, f, "gpu0", func(c *ControlConfig) { c.Foreground, c.MaxLog = true, 512 },
		Backoff{Min: 10 * time.Millisecond, Max: time.Minute})
	log := filepath.Join(logDir, ForegroundLog)
	eventually(t, func() bool {
		_, err := os.Stat(log + ".1")
		return err == nil
	}, "the log moved aside once past 512 bytes of pings")
	kept, err := os.ReadFile(log + ".1")
	require.NoError(t, err)
	require.Contains(t, string(kept), "] Cmd:get_server_list\n")
	require.Len(t, kept, 512, "its last 512 bytes")
	// The daemon goes on from the log's start (it appends), not past a hole.
	var logged []byte
	eventually(t, func() bool {
		logged, err = os.ReadFile(log)
		return err == nil && len(logged) > 0
	}, "the daemon writes on into its log")
	require.Equal(t, byte('['), logged[0], "the log's first byte")
}

func TestSupervisorBacksOffExponentially(t *testing.T) {
	f := newFakeMPS(t)
	_, sup, logs, stop := supervised(t, f, "gpu0", nil, Backoff{Min: 10 * time.Millisecond, Max: time.Minute})
	// Restarts fail until the switch is removed.
	f.set(t, "fail-start", "")
	// Stop the running daemon behind the supervisor's back.
	_, err := newTestDaemon(t, f, "gpu0", nil).Query(context.Background(), "quit")
	require.NoError(t, err)

	eventually(t, func() bool { return logs.FilterMessage("restart of MPS control daemon failed").Len() >= 4 }, "four failed restarts")
	require.Equal(t, MPSRestarting, sup.Status().State)
	require.Contains(t, sup.Status().LastError, "fake: start refused")
	f.clear(t, "fail-start")
	eventually(t, func() bool { return sup.Status().State == MPSRunning }, "running again")

	got := backoffs(logs)
	require.GreaterOrEqual(t, len(got), 5)
	require.Equal(t, []time.Duration{10, 20, 40, 80, 160}, scale(got[:5], time.Millisecond))
	for _, e := range logs.FilterMessage("restart of MPS control daemon failed").All() {
		require.Contains(t, e.ContextMap()["error"], "fake: start refused")
	}
	require.Equal(t, 1, sup.Status().Restarts)
	stop()
}

func TestSupervisorLeavesAnExistingDaemonAlone(t *testing.T) {
	f := newFakeMPS(t)
	owner := newTestDaemon(t, f, "shared", nil)
	require.NoError(t, owner.Start(context.Background()))
	_, sup, logs, stop := supervised(t, f, "shared", func(c *ControlConfig) {
		c.Existing = true
	}, Backoff{Min: time.Millisecond, Max: time.Millisecond})
	require.NoError(t, owner.Quit(context.Background()))

	eventually(t, func() bool { return sup.Status().State == MPSUnreachable }, "unreachable")
	require.Equal(t, 1, f.count(t, "start"), "never restarted")
	require.Zero(t, logs.FilterMessage("restarting MPS control daemon").Len())
	require.Equal(t, 1, logs.FilterMessage("existing MPS control daemon does not answer; it is not gpuletd's to restart").Len())

	require.NoError(t, owner.Start(context.Background()))
	eventually(t, func() bool { return sup.Status().State == MPSRunning }, "answers again")
	stop()
	require.NoError(t, owner.Quit(context.Background()))
}
