package daemon

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/profiler/store"
)

func TestStartWords(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 5, 0, 0, 0, time.Local)
	start := func(ver, pid, boot, oom string) *store.Event {
		return &store.Event{At: t0, Kind: EventDaemonStart, Attrs: map[string]string{"version": ver, "pid": pid, "boot_id": boot, "oom_kills": oom}}
	}
	stop := &store.Event{At: t0.Add(time.Hour), Kind: EventDaemonStop}
	later := &store.Event{At: t0.Add(90 * time.Minute), Kind: EventExecutorRestart}
	here := host{bootID: "b1", oomKills: 3}
	unknown := host{oomKills: -1}
	noStop := "; the run before it (pid 5, started 2026-12-02 05:00:00) recorded no stop: "
	for _, tc := range []struct {
		name       string
		h          host
		prev, last *store.Event
		sev        store.Severity
		msg        string
		attrs      map[string]string
	}{
		{"first start", here, nil, nil, store.SeverityInfo, "gpuletd v2 started (pid 7)",
			map[string]string{"version": "v2", "pid": "7", "boot_id": "b1", "oom_kills": "3"}},
		{"after a stop, on a kernel that tells nothing", unknown, stop, stop, store.SeverityInfo, "gpuletd v2 started (pid 7)",
			map[string]string{"version": "v2", "pid": "7"}},
		{"after a start of another version that did not stop, the same boot", here, start("v1", "5", "b1", "3"), later, store.SeverityWarning,
			"gpuletd v2 started (pid 7), after v1" + noStop + "it was killed or crashed, after its last event at 2026-12-02 06:30:00 " +
				"(its log may say which: journalctl -u gpuletd)",
			map[string]string{"version": "v2", "pid": "7", "boot_id": "b1", "oom_kills": "3", "previous_version": "v1", "previous_pid": "5",
				"previous_start": t0.Format(time.RFC3339), "previous_last_event": later.At.Format(time.RFC3339)}},
		{"the kernel killed for memory since", here, start("v2", "5", "b1", "2"), start("v2", "5", "b1", "2"), store.SeverityWarning,
			"gpuletd v2 started (pid 7)" + noStop + "most likely the kernel's out-of-memory killer killed it (its count of kills rose since that start), " +
				"after its last event at 2026-12-02 05:00:00 (journalctl -k names the process the kernel chose; the daemon and its executors need more memory than the host had)",
			map[string]string{"version": "v2", "pid": "7", "boot_id": "b1", "oom_kills": "3", "previous_pid": "5", "cause": "oom",
				"previous_start": t0.Format(time.RFC3339), "previous_last_event": t0.Format(time.RFC3339)}},
		{"the machine restarted", here, start("v2", "5", "b0", "9"), later, store.SeverityWarning,
			"gpuletd v2 started (pid 7)" + noStop + "the machine restarted under it, after its last event at 2026-12-02 06:30:00 " +
				"(journalctl --list-boots; journalctl -b -1 says how the last boot ended)",
			map[string]string{"version": "v2", "pid": "7", "boot_id": "b1", "oom_kills": "3", "previous_pid": "5", "cause": "reboot",
				"previous_start": t0.Format(time.RFC3339), "previous_last_event": later.At.Format(time.RFC3339)}},
		{"a start of a release that recorded no boot", here, start("v2", "5", "", ""), later, store.SeverityWarning,
			"gpuletd v2 started (pid 7)" + noStop + "it was killed, crashed, or the machine went down, after its last event at 2026-12-02 06:30:00 " +
				"(its log may say which: journalctl -u gpuletd)",
			map[string]string{"version": "v2", "pid": "7", "boot_id": "b1", "oom_kills": "3", "previous_pid": "5",
				"previous_start": t0.Format(time.RFC3339), "previous_last_event": later.At.Format(time.RFC3339)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sev, msg, attrs := startWords("v2", 7, tc.h, tc.prev, tc.last)
			require.Equal(t, tc.sev, sev)
			require.Equal(t, tc.msg, msg)
			require.Equal(t, tc.attrs, attrs)
		})
	}
}

// Each run of the daemon leaves a start and a stop in the history; a run
// that left a start alone (killed, crashed) is named, as a warning, by
// the next start, which the status's last hour then counts.
func TestTheHistoryHoldsTheDaemonsRuns(t *testing.T) {
	ctx := context.Background()
	_, st := historyNode(t)
	run := func() *events {
		e := newEvents(st, zap.NewNop())
		require.NoError(t, e.recallProblems(ctx, time.Now()))
		return e
	}
	kinds := func() []store.Event {
		evs, err := st.LatestEventsMatching(ctx, 0, store.EventFilter{Kinds: []string{EventDaemonStart, EventDaemonStop}})
		require.NoError(t, err)
		return evs
	}

	e := run()
	t0 := time.Now()
	e.recordStart(ctx, "v1", 100, host{oomKills: -1})
	e.recordStop("v1", t0, t0.Add(90*time.Second), signalCause("terminated signal received"), nil)
	evs := kinds()
	require.Len(t, evs, 2)
	require.Equal(t, store.SeverityInfo, evs[0].Severity)
	require.Equal(t, "gpuletd v1 started (pid 100)", evs[0].Message)
	require.Equal(t, "gpuletd stopped after 1m30s (terminated signal received)", evs[1].Message)
	require.Equal(t, map[string]string{"version": "v1", "ran": "1m30s", "cause": "terminated signal received"}, evs[1].Attrs)

	e = run()
	e.recordStart(ctx, "v2", 200, host{oomKills: -1})
	e.add(EventExecutorRestart, store.SeverityWarning, "executor exited", nil)
	evs = kinds()
	require.Equal(t, store.SeverityInfo, evs[2].Severity, "the run before stopped")
	require.Equal(t, "gpuletd v2 started (pid 200), after v1", evs[2].Message)
	// This run is killed: it records no stop.

	e = run()
	require.Equal(t, 1, e.recent(time.Now()).Warnings, "the killed run's warning is read back")
	e.recordStart(ctx, "v2", 300, host{oomKills: -1})
	evs = kinds()
	last := evs[len(evs)-1]
	require.Equal(t, store.SeverityWarning, last.Severity)
	require.Contains(t, last.Message, "the run before it (pid 200, started ")
	require.Equal(t, "200", last.Attrs["previous_pid"])
	require.Equal(t, recentProblems{Window: "1h0m0s", Warnings: 2}, e.recent(time.Now()), "and the status counts it")

	e.recordStop("v2", t0, t0.Add(2*time.Second), context.Canceled, errors.New("listen on 127.0.0.1:8700: address already in use"))
	last = kinds()[len(kinds())-1]
	require.Equal(t, store.SeverityError, last.Severity)
	require.Equal(t, "gpuletd stopped after 2s on an error: listen on 127.0.0.1:8700: address already in use", last.Message)
	require.Equal(t, recentProblems{Window: "1h0m0s", Warnings: 2, Errors: 1}, e.recent(time.Now()))
}

// signalCause is a cancellation's cause as os/signal.NotifyContext gives
// it: its own words, and context.Canceled to errors.Is.
type signalCause string

func (s signalCause) Error() string        { return string(s) }
func (s signalCause) Is(target error) bool { return target == context.Canceled }

// HowRunEnded reads this machine: a start of this boot with the kernel's
// count as it is now was killed or crashed; one of another boot ended with
// the machine.
func TestHowRunEndedOnThisMachine(t *testing.T) {
	h := thisHost()
	if h.bootID == "" || h.oomKills < 0 {
		t.Skip("this kernel gives no boot ID or out-of-memory count")
	}
	oom := strconv.FormatInt(h.oomKills, 10)
	how, _ := HowRunEnded(store.Event{Attrs: map[string]string{"boot_id": h.bootID, "oom_kills": oom}})
	require.Equal(t, "it was killed or crashed", how)
	how, hint := HowRunEnded(store.Event{Attrs: map[string]string{"boot_id": "another boot", "oom_kills": oom}})
	require.Equal(t, "the machine restarted under it", how)
	require.Contains(t, hint, "journalctl -b -1")
}
