package daemon

import (
	"context"
	"sync"

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
)

// events records what happens in the store (the history) and hands each
// event to live subscribers (the admin feed).
type events struct {
	st  *store.Store
	log *zap.Logger

	mu   sync.Mutex
	subs map[chan store.Event]bool
}

func newEvents(st *store.Store, log *zap.Logger) *events {
	return &events{st: st, log: log, subs: map[chan store.Event]bool{}}
}

// add records an event; a store failure is logged, never fatal.
func (e *events) add(kind string, sev store.Severity, msg string, attrs map[string]string) {
	ev, err := e.st.AppendEvent(context.Background(), store.Event{Kind: kind, Severity: sev, Message: msg, Attrs: attrs})
	if err != nil {
		e.log.Warn("record event", zap.String("kind", kind), zap.String("message", msg), zap.Error(err))
		ev = store.Event{Kind: kind, Severity: sev, Message: msg, Attrs: attrs}
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
	for ch := range e.subs {
		select {
		case ch <- ev:
		default: // a slow reader loses live events; it can re-read the history
		}
	}
	e.mu.Unlock()
}

func (e *events) subscribe() chan store.Event {
	ch := make(chan store.Event, 64)
	e.mu.Lock()
	e.subs[ch] = true
	e.mu.Unlock()
	return ch
}

func (e *events) unsubscribe(ch chan store.Event) {
	e.mu.Lock()
	delete(e.subs, ch)
	e.mu.Unlock()
}
