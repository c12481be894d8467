package hrtimer

import (
	"sync"
	"time"
)

// Timer is a one-shot timer with a channel, like time.Timer: Reset arms it,
// Stop disarms it, and after either no value from an earlier arming is
// received on C. It holds a file and a goroutine until Close.
type Timer struct {
	// C receives the time the timer fired.
	C <-chan time.Time
	c chan time.Time

	mu       sync.Mutex
	armed    bool
	at       time.Time   // when the current arming is due
	fallback *time.Timer // the runtime's timer, where no clock file serves
	clock    clockFile   // nil: none, or no longer (the runtime's timers only)
	set      bool        // clock is armed (an arming's expiry may be unread)
	closed   bool
	done     chan struct{} // closed when the reader has returned; nil: no reader
}

// clockFile is a kernel timer the timer arms and waits on.
type clockFile interface {
	// set arms it to expire after d (> 0), or disarms it for d = 0.
	set(d time.Duration) error
	// wait blocks until it expires, or fails once interrupt is called;
	// an error ends the waiting for good.
	wait() error
	interrupt()
	close() error
}

// NewTimer returns a stopped timer.
func NewTimer() *Timer {
	c := make(chan time.Time, 1)
	t := &Timer{C: c, c: c}
	if f, err := newClockFile(); err == nil {
		t.clock, t.done = f, make(chan struct{})
		go t.read(f)
	}
	return t
}

// read fires the timer each time its clock file expires, until the file
// fails or is closed; after that the runtime's timers serve.
func (t *Timer) read(f clockFile) {
	defer close(t.done)
	for {
		if err := f.wait(); err != nil {
			t.mu.Lock()
			t.clock = nil
			if t.armed && !t.closed { // it will not fire by the file now
				t.fallback = time.AfterFunc(time.Until(t.at), t.fire)
			}
			t.mu.Unlock()
			return
		}
		t.fire()
	}
}

// fire sends the time on C if the current arming is due; an expiry of an
// earlier arming, read after Reset, is not.
func (t *Timer) fire() {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if !t.armed || now.Before(t.at) {
		return
	}
	t.armed, t.set = false, false
	select {
	case t.c <- now:
	default:
	}
}

// Reset arms the timer to fire after d, dropping an arming not yet
// received; d ≤ 0 fires it at once.
func (t *Timer) Reset(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.disarm()
	if t.closed {
		return
	}
	now := time.Now()
	if d <= 0 {
		t.c <- now // drained by disarm: there is room
		return
	}
	t.armed, t.at = true, now.Add(d)
	if t.clock != nil && t.clock.set(d) == nil { // re-arms it if set
		t.set = true
		return
	}
	t.fallback = time.AfterFunc(d, t.fire)
}

// Stop disarms the timer and drops a firing not yet received.
func (t *Timer) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.disarm()
	if t.set && t.clock != nil {
		_ = t.clock.set(0) // a disarming that fails leaves an expiry, which fire drops
	}
	t.set = false
}

// disarm stops the runtime's timer and empties C; t.mu is held. An expiry
// of the clock file for the arming dropped is dropped by fire.
func (t *Timer) disarm() {
	t.armed = false
	if t.fallback != nil {
		t.fallback.Stop()
		t.fallback = nil
	}
	select {
	case <-t.c:
	default:
	}
}

// Close stops the timer for good and releases its file and goroutine.
func (t *Timer) Close() error {
	t.mu.Lock()
	t.disarm()
	t.closed = true
	clock := t.clock
	t.clock = nil // no arming touches the file from here
	t.mu.Unlock()
	if clock == nil {
		if t.done != nil {
			<-t.done
		}
		return nil
	}
	err := clock.close()
	<-t.done
	return err
}
