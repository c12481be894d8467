package daemon

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
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
func (e *events) recordStart(ctx context.Context, ver string, pid int, h host) (unclean bool) {
	prev, last, err := previousRun(ctx, e.st)
	if err != nil {
		e.log.Warn("read the previous run's events", zap.Error(err))
	}
	sev, msg, attrs := startWords(ver, pid, h, prev, last)
	e.add(EventDaemonStart, sev, msg, attrs)
	return sev == store.SeverityWarning
}

// host is what a start records of the machine, to tell at the next start
// how a run that recorded no stop ended.
type host struct {
	// bootID changes when the machine starts again
	// (/proc/sys/kernel/random/boot_id); "" unknown.
	bootID string
	// oomKills is the kernel's count of out-of-memory kills since boot
	// (readOOMKills); -1 unknown.
	oomKills int64
}

// bootIDPath is where Linux gives a random ID of the current boot.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// thisHost reads the boot's ID and the kernel's out-of-memory kills.
func thisHost() host {
	h := host{oomKills: -1}
	if b, err := os.ReadFile(bootIDPath); err == nil {
		h.bootID = strings.TrimSpace(string(b))
	}
	if n, ok := readOOMKills(); ok {
		h.oomKills = n
	}
	return h
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
// pid on host h, given the previous run's newest start or stop (prev) and
// the history's newest event (last). A run that recorded no stop ended
// with the machine when the boot changed since its start, most likely by
// the kernel's out-of-memory killer when the kernel's count of those kills
// rose since, and otherwise killed or crashed.
func startWords(ver string, pid int, h host, prev, last *store.Event) (store.Severity, string, map[string]string) {
	attrs := map[string]string{"version": ver, "pid": strconv.Itoa(pid)}
	if h.bootID != "" {
		attrs["boot_id"] = h.bootID
	}
	if h.oomKills >= 0 {
		attrs["oom_kills"] = strconv.FormatInt(h.oomKills, 10)
	}
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
	lastAt := lastOfRun(prev, last).At
	attrs["previous_pid"] = prev.Attrs["pid"]
	attrs["previous_start"] = prev.At.Format(time.RFC3339)
	attrs["previous_last_event"] = lastAt.Format(time.RFC3339)
	how, hint, cause := h.howRunEnded(*prev)
	if cause != "" {
		attrs["cause"] = cause
	}
	msg += fmt.Sprintf("; the run before it (pid %s, started %s) recorded no stop: %s, after its last event at %s (%s)",
		prev.Attrs["pid"], prev.At.Local().Format(time.DateTime), how, lastAt.Local().Format(time.DateTime), hint)
	return store.SeverityWarning, msg, attrs
}

// lastOfRun is the last event of the run that recorded the start start
// and no stop: the history's newest (latest, nil when unknown), or the
// start itself when nothing came after it.
func lastOfRun(start, latest *store.Event) *store.Event {
	if latest != nil && latest.At.After(start.At) {
		return latest
	}
	return start
}

// LastRun says how the daemon's last run recorded in st ended: its stop
// event, or its start and, recording no stop, how it most likely ended
// (HowRunEnded) and its last event; "" when the history has no start or
// stop (nothing served from it, or a release that recorded none).
func LastRun(ctx context.Context, st *store.Store) (string, error) {
	run, latest, err := previousRun(ctx, st)
	if err != nil || run == nil {
		return "", err
	}
	at := func(e *store.Event) string { return e.At.Local().Format(time.DateTime) }
	if run.Kind == EventDaemonStop {
		return at(run) + " " + run.Message, nil
	}
	last := lastOfRun(run, latest)
	how, hint := HowRunEnded(*run)
	return fmt.Sprintf("gpuletd %s (pid %s) started at %s and recorded no stop: %s, after its last event, at %s: %s: %s (%s)",
		run.Attrs["version"], run.Attrs["pid"], at(run), how, at(last), last.Kind, last.Message, hint), nil
}

// HowRunEnded says how the run of the daemon that recorded the start
// event start and no stop most likely ended, as seen from this machine
// now (its boot and the kernel's out-of-memory kills): how, and where to
// read more.
func HowRunEnded(start store.Event) (how, hint string) {
	how, hint, _ = thisHost().howRunEnded(start)
	return how, hint
}

// howRunEnded is HowRunEnded on host h, with a cause for the event's
// attributes: reboot, oom, or "" when it cannot tell.
func (h host) howRunEnded(start store.Event) (how, hint, cause string) {
	how, hint = "it was killed, crashed, or the machine went down", "its log may say which: journalctl -u gpuletd"
	oomThen, oomErr := strconv.ParseInt(start.Attrs["oom_kills"], 10, 64)
	switch was := start.Attrs["boot_id"]; {
	case was != "" && h.bootID != "" && was != h.bootID:
		return "the machine restarted under it", "journalctl --list-boots; journalctl -b -1 says how the last boot ended", "reboot"
	case was != "" && was == h.bootID && oomErr == nil && h.oomKills > oomThen:
		return "most likely the kernel's out-of-memory killer killed it (its count of kills rose since that start)",
			"journalctl -k names the process the kernel chose; the daemon and its executors need more memory than the host had", "oom"
	case was != "" && was == h.bootID:
		how = "it was killed or crashed"
	}
	return how, hint, ""
}

// recordStop records the stop of the daemon of version ver: why (the
// signal, from cause) and after how long; an error when it stops on one
// (err), a listener that failed or a start it gave up.
func (e *events) recordStop(ver string, started, now time.Time, cause, err error) {
	ran := now.Sub(started)
	if ran < time.Minute {
		ran = ran.Round(100 * time.Millisecond)
	} else {
		ran = ran.Round(time.Second)
	}
	attrs := map[string]string{"version": ver, "ran": ran.String()}
	defer e.lastSave()
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

// lastSaveTimeout bounds lastSave: the store's busy timeout, and room.
const lastSaveTimeout = 2 * store.DefaultBusyTimeout

// lastSave tries once more, as the daemon stops, to save the events kept
// in memory: a write lock another process held may have been let go since
// the store watch last tried (Recover waits the busy timeout at most). What
// still cannot be saved is counted in the log, the last place it shows.
func (e *events) lastSave() {
	if len(e.pending()) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), lastSaveTimeout)
	defer cancel()
	err := e.st.Recover(ctx)
	if err == nil {
		err = e.flush()
	}
	if err != nil {
		e.log.Warn("events kept in memory are lost as the daemon stops: the database cannot be written", zap.Int("events", len(e.pending())), zap.Error(err))
	}
}
