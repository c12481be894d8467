package daemon

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// recordStart records the daemon's start in the history: an info, or a
// warning when the run before it recorded a start and no stop (it was
// killed, crashed, or the machine went down), so that the history, the
// status's last hour, systemd's status line and the metrics
// (gpuletd_unclean_start) say so. It says whether that run recorded no
// stop.
func (e *events) recordStart(ctx context.Context, ver string, pid int) (unclean bool) {
	prev, last, err := previousRun(ctx, e.st)
	if err != nil {
		e.log.Warn("read the previous run's events", zap.Error(err))
	}
	sev, msg, attrs := startWords(ver, pid, prev, last)
	e.add(EventDaemonStart, sev, msg, attrs)
	return sev == store.SeverityWarning
}

// previousRun reads the history's newest start or stop of the daemon and
// its newest event of all; nil, nil when the history has no start or stop
// (a first start, or a database of a release that recorded none).
func previousRun(ctx context.Context, st *store.Store) (prev, last *store.Event, err error) {
	evs, err := st.LatestEventsMatching(ctx, 1, store.EventFilter{Kinds: []string{EventDaemonStart, EventDaemonStop}})
	if err != nil || len(evs) == 0 {
		return nil, nil, err
	}
	latest, err := st.LatestEvents(ctx, 1)
	if err != nil || len(latest) == 0 {
		return &evs[0], nil, err
	}
	return &evs[0], &latest[0], nil
}

// startWords is the start event of a daemon of version ver and process
// pid, given the previous run's newest start or stop (prev) and the
// history's newest event (last).
func startWords(ver string, pid int, prev, last *store.Event) (store.Severity, string, map[string]string) {
	attrs := map[string]string{"version": ver, "pid": strconv.Itoa(pid)}
	msg := fmt.Sprintf("gpuletd %s started (pid %d)", ver, pid)
	if prev == nil {
		return store.SeverityInfo, msg, attrs
	}
	if was := prev.Attrs["version"]; was != "" && was != ver {
		attrs["previous_version"] = was
		msg = fmt.Sprintf("gpuletd %s started (pid %d), after %s", ver, pid, was)
	}
	if prev.Kind != EventDaemonStart {
		return store.SeverityInfo, msg, attrs
	}
	lastAt := prev.At
	if last != nil && last.At.After(lastAt) {
		lastAt = last.At
	}
	attrs["previous_pid"] = prev.Attrs["pid"]
	attrs["previous_start"] = prev.At.Format(time.RFC3339)
	attrs["previous_last_event"] = lastAt.Format(time.RFC3339)
	msg += fmt.Sprintf("; the run before it (pid %s, started %s) recorded no stop: it was killed, crashed, "+
		"or the machine went down, after its last event at %s (its log may say which: journalctl -u gpuletd)",
		prev.Attrs["pid"], prev.At.Local().Format(time.DateTime), lastAt.Local().Format(time.DateTime))
	return store.SeverityWarning, msg, attrs
}

// recordStop records the stop of the daemon of version ver: why (the
// signal, from cause) and after how long; an error when it stops on one
// (err), a listener that failed or a start it gave up.
func (e *events) recordStop(ver string, started, now time.Time, cause, err error) {
	ran := now.Sub(started).Round(time.Second)
	if ran < time.Minute {
		ran = now.Sub(started).Round(100 * time.Millisecond)
	}
	attrs := map[string]string{"version": ver, "ran": ran.String()}
	if err != nil {
		attrs["error"] = err.Error()
		e.add(EventDaemonStop, store.SeverityError, fmt.Sprintf("gpuletd stopped after %s on an error: %v", ran, err), attrs)
		return
	}
	msg := fmt.Sprintf("gpuletd stopped after %s", ran)
	// A signal's cause is also context.Canceled (errors.Is), so compare
	// the plain cancellation itself.
	if cause != nil && cause != context.Canceled {
		attrs["cause"] = cause.Error()
		msg += " (" + cause.Error() + ")"
	}
	e.add(EventDaemonStop, store.SeverityInfo, msg, attrs)
}
