package daemon

import (
	"context"
	"sync"
)

// inflight counts the requests the daemon has routed to one gpu-let and not
// yet answered, so that retiring the gpu-let waits for them before it drains
// and stops the executor. Without it a request routed just before the
// gpu-let was marked draining could reach the executor after its drain, or
// after its process ended, and fail although it was admitted.
type inflight struct {
	mu     sync.Mutex
	n      int
	sent   int64 // requests admitted, ever
	closed bool
	idle   chan struct{} // closed when closed is set and n is 0
}

// acquire admits one request; false once the gpu-let is closing.
func (f *inflight) acquire() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.n++
	f.sent++
	return true
}

// total is how many requests acquire has admitted.
func (f *inflight) total() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent
}

// release ends a request acquire admitted.
func (f *inflight) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.closed && f.n == 0 {
		close(f.idle)
	}
}

// closeAndWait admits no more requests and waits until those admitted are
// answered or ctx ends (each is bounded by its own deadline anyway).
func (f *inflight) closeAndWait(ctx context.Context) error {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		f.idle = make(chan struct{})
		if f.n == 0 {
			close(f.idle)
		}
	}
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
