package daemon

import (
	"context"
	"sync"
	"time"
)

// lazyDeadline is its Context ending at deadline, whose timer starts only
// once something waits on it: a holding that finds room at once, as nearly
// all do, makes none.
type lazyDeadline struct {
	context.Context
	deadline time.Time
	inner    context.Context
	cancel   context.CancelFunc
	once     sync.Once
}

func (l *lazyDeadline) start() {
	l.once.Do(func() { l.inner, l.cancel = context.WithDeadline(l.Context, l.deadline) })
}

// Deadline is when it ends: its own deadline, or its Context's if sooner.
func (l *lazyDeadline) Deadline() (time.Time, bool) {
	if d, ok := l.Context.Deadline(); ok && d.Before(l.deadline) {
		return d, true
	}
	return l.deadline, true
}

// Done starts the timer.
func (l *lazyDeadline) Done() <-chan struct{} { l.start(); return l.inner.Done() }

// Err says why it ended, if it has.
func (l *lazyDeadline) Err() error { l.start(); return l.inner.Err() }

// stop stops the timer, if it started.
func (l *lazyDeadline) stop() {
	if l.cancel != nil {
		l.cancel()
	}
}
