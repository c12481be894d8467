package daemon

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// Event kinds the daemon records.
const (
	EventReorganize      = "reorganize"
	EventExecutorStart   = "executor_start"
	EventExecutorRestart = "executor_restart"
	EventExecutorStop    = "executor_stop"
	EventModelInvalid    = "model_invalid"
	EventModelLoad       = "model_load"
	EventModelUnload     = "model_unload"
	EventProfileJob      = "profile_job"
	EventConfigReload    = "config_reload"
	EventPlan            = "plan"
	EventDevices         = "devices"
	EventStore           = "store"
	// EventSLOUnreachable: a model's batch of one is predicted past its SLO
	// on a gpu-let it is placed on (slowstart.go).
	EventSLOUnreachable = "slo_unreachable"
	// EventRequestLimit: a served model's smallest request is above
	// limits.max_request_body (requestlimit.go).
	EventRequestLimit = "request_limit"
	// EventDaemonStart: the daemon started; a warning when the run before
	// it recorded no stop (lifecycle.go).
	EventDaemonStart = "daemon_start"
	// EventDaemonStop: the daemon stopped, or gave up starting.
	EventDaemonStop = "daemon_stop"
	// EventExecutorStall: an executor sent nothing while a request waited
	// past its deadline, and its gpu-let is routed around; then that it
	// answers again (stall.go).
	EventExecutorStall = "executor_stall"
	// EventRequestQuarantined: a request crashed or hung its model's
	// executor, or faulted its GPU, in a run of its own and is refused for
	// a while
	// (crash_suspects.go).
	EventRequestQuarantined = "request_quarantined"
)

// EventKinds are the kinds of the events the daemon records, what an events
// filter may name.
func EventKinds() []string { return slices.Clone(knownEventKinds) }

// knownEventKinds are the kinds above: what an events filter may name.
var knownEventKinds = []string{
	EventReorganize, EventExecutorStart, EventExecutorRestart, EventExecutorStop,
	EventModelInvalid, EventModelLoad, EventModelUnload, EventProfileJob,
	EventConfigReload, EventPlan, EventDevices, EventStore, EventSLOUnreachable,
	EventRequestLimit, EventDaemonStart, EventDaemonStop, EventExecutorStall,
	EventRequestQuarantined,
}

// events records what happens in the store (the history) and hands each
// event to live subscribers (the admin feed).
type events struct {
	st  *store.Store
	log *zap.Logger

	// saving orders the events' writes to the store, so that the history
	// keeps their order; it is held across a write, which may wait on the
	// database's lock, and mu never is, so that the status and the
	// metrics that read mu's fields do not wait on the database.
	saving sync.Mutex

	mu      sync.Mutex
	subs    map[*subscription]bool
	ended   bool          // the daemon stops: subscriptions are closed (endSubscriptions)
	unsaved []store.Event // recorded while the store could not be written, oldest first
	front   uint64        // events ever taken off unsaved's front, saved or dropped
	dropped int           // unsaved events dropped over maxUnsaved
	// problems are the warnings and errors of the last problemWindow,
	// oldest first, for the status (recentProblems).
	problems []problem
	// counts are the events recorded since the start by kind and
	// severity, for the metrics (gpuletd_events_total).
	counts map[eventCount]int64
}

// maxUnsaved bounds the events kept in memory while the store cannot be
// written; older ones are dropped first.
const maxUnsaved = 1000

func newEvents(st *store.Store, log *zap.Logger) *events {
	return &events{st: st, log: log, subs: map[*subscription]bool{}}
}

// add records an event; a store failure is logged, never fatal.
func (e *events) add(kind string, sev store.Severity, msg string, attrs map[string]string) {
	ev := store.Event{At: time.Now(), Kind: kind, Severity: sev, Message: msg, Attrs: attrs}
	if saved, err := e.save(ev); err == nil {
		ev = saved
	} else if !store.Unwritable(err) {
		e.log.Warn("record event", zap.String("kind", kind), zap.String("message", msg), zap.Error(err))
	}
	fields := []zap.Field{zap.String("event", kind)}
	for k, v := range attrs {
		fields = append(fields, zap.String(k, v))
	}
	switch sev {
	case store.SeverityError:
		e.log.Error(msg, fields...)
	case store.SeverityWarning:
		e.log.Warn(msg, fields...)
	default:
		e.log.Info(msg, fields...)
	}
	e.mu.Lock()
	e.countLocked(ev)
	e.publishLocked(ev)
	e.mu.Unlock()
}

// save stores ev after any events kept unsaved (so that the history keeps
// its order), or keeps it in memory when the store cannot be written: at
// once while the store is known not to take writes (the store watch saves
// what is kept when it can, storehealth.go), so that an event does not wait
// on a database another process holds locked.
func (e *events) save(ev store.Event) (store.Event, error) {
	e.saving.Lock()
	defer e.saving.Unlock()
	if ok, why := e.st.Writable(); !ok {
		e.keep(ev)
		return ev, why
	}
	if err := e.flushSaving(); err != nil {
		e.keep(ev)
		return ev, err
	}
	saved, err := e.st.AppendEvent(context.Background(), ev)
	if err != nil && store.Unwritable(err) {
		e.keep(ev)
	}
	return saved, err
}

// keep adds ev to the events kept in memory, dropping the oldest past
// maxUnsaved.
func (e *events) keep(ev store.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.unsaved) >= maxUnsaved {
		e.unsaved = e.unsaved[1:]
		e.front++
		e.dropped++
	}
	e.unsaved = append(e.unsaved, ev)
}

// flushSaving stores the events kept unsaved, oldest first, and stops at
// the first that fails; e.saving is held, e.mu is not.
func (e *events) flushSaving() error {
	for {
		e.mu.Lock()
		if len(e.unsaved) == 0 {
			dropped := e.dropped
			e.dropped = 0
			e.mu.Unlock()
			if dropped > 0 {
				e.log.Warn("events dropped while the store could not be written", zap.Int("dropped", dropped))
			}
			return nil
		}
		ev, front := e.unsaved[0], e.front
		e.mu.Unlock()
		_, err := e.st.AppendEvent(context.Background(), ev)
		if err != nil && store.Unwritable(err) {
			return err
		}
		if err != nil {
			e.log.Warn("record event", zap.String("kind", ev.Kind), zap.Error(err))
		}
		e.mu.Lock()
		if e.front == front { // else keep dropped ev meanwhile
			e.unsaved = e.unsaved[1:]
			e.front++
		}
		e.mu.Unlock()
	}
}

// flush stores the events kept unsaved; it fails while the store cannot be
// written.
func (e *events) flush() error {
	e.saving.Lock()
	defer e.saving.Unlock()
	return e.flushSaving()
}

// pending returns the events kept in memory because the store could not be
// written (they have no ID yet).
func (e *events) pending() []store.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]store.Event(nil), e.unsaved...)
}
