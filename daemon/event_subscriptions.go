package daemon

import (
	"sync/atomic"

	"github.com/gpulet/gpuletd/profiler/store"
)

// subscription is a reader of the events as they are added.
type subscription struct {
	// ch has the events added since the subscription; it is closed when
	// the daemon stops.
	ch chan store.Event
	// lagged is set when ch was full and an event was left out of it:
	// the reader catches up from the history (store.Events after the
	// last ID it sent).
	lagged atomic.Bool
}

// subscribe returns a subscription to the events added from now on, whose
// channel is closed when the daemon stops (endSubscriptions).
func (e *events) subscribe() *subscription {
	sub := &subscription{ch: make(chan store.Event, 64)}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		close(sub.ch)
		return sub
	}
	e.subs[sub] = true
	return sub
}

// endSubscriptions closes every subscriber's channel, and those of later
// subscriptions at once: the daemon stops, and a stream held open by a
// reader (the admin page, gpuletd events -f) must end for the HTTP server
// to stop. It kept the server for its whole shutdown grace, which left the
// executors none.
func (e *events) endSubscriptions() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ended = true
	for sub := range e.subs {
		close(sub.ch)
		delete(e.subs, sub)
	}
}

func (e *events) unsubscribe(sub *subscription) {
	e.mu.Lock()
	delete(e.subs, sub)
	e.mu.Unlock()
}

// publishLocked hands ev to every subscriber; one whose channel is full is
// marked lagged and reads the history again. e.mu is held.
func (e *events) publishLocked(ev store.Event) {
	for sub := range e.subs {
		select {
		case sub.ch <- ev:
		default:
			sub.lagged.Store(true)
		}
	}
}
