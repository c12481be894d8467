package connlimit

import (
	"container/list"
	"context"
	"sync"
)

// queue is a weighted semaphore whose waiters are served in the order they
// came, except that a request that continues a holding (a body being read
// that needs room to grow) goes before any that begins one. A body that
// has started thus finishes before new ones take the room it needs: with
// plain first-come order, a flood of bodies that each hold their first part
// and wait for the next can fill the budget with bodies none of which is
// ever read whole.
type queue struct {
	mu      sync.Mutex
	size    int64
	cur     int64
	waiting [2]list.List // of *waiter: continuing, then beginning
}

// waiter is one acquisition waiting for room; ready is closed once it has it.
type waiter struct {
	n     int64
	ready chan struct{}
}

// Classes of waiters, in the order they are served.
const (
	continuing = 0
	beginning  = 1
)

func newQueue(size int64) *queue { return &queue{size: size} }

// class is the waiting class of a request that continues a holding or not.
func class(cont bool) int {
	if cont {
		return continuing
	}
	return beginning
}

// free tells whether n fits now beside what is held, ahead of every waiter
// of class c or of a class served before it (q.mu held).
func (q *queue) free(n int64, c int) bool {
	if q.cur+n > q.size {
		return false
	}
	for k := 0; k <= c; k++ {
		if q.waiting[k].Len() > 0 {
			return false
		}
	}
	return true
}

// acquire takes n for a request that continues a holding or not: at once
// when they fit ahead of the waiters of its class and those served before
// it, even if ctx has ended (a request whose wait is over still gets room
// that is there), else waiting in its class's turn until they fit or ctx
// ends (then nothing is taken and ctx's error returned). n must not be
// over the queue's size.
func (q *queue) acquire(ctx context.Context, n int64, cont bool) error {
	c := class(cont)
	q.mu.Lock()
	if q.free(n, c) {
		q.cur += n
		q.mu.Unlock()
		return nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	e := q.waiting[c].PushBack(w)
	q.mu.Unlock()

	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-w.ready:
		// Room came as the wait ended: give it back.
		q.cur -= n
	default:
		q.waiting[c].Remove(e)
	}
	// The waiter gone may have kept smaller ones behind it waiting.
	q.grant()
	return ctx.Err()
}

// force takes n at once, past the queue's size if need be: the waiters
// wait until it is back under it.
func (q *queue) force(n int64) {
	q.mu.Lock()
	q.cur += n
	q.mu.Unlock()
}

// release gives back n.
func (q *queue) release(n int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cur -= n
	if q.cur < 0 {
		panic("connlimit: released more than held")
	}
	q.grant()
}

// grant hands room to waiters in order while the first of them fits: the
// continuing ones first, and the beginning ones only once none continues
// (q.mu held).
func (q *queue) grant() {
	for c := range q.waiting {
		for {
			e := q.waiting[c].Front()
			if e == nil {
				break
			}
			w := e.Value.(*waiter)
			if q.cur+w.n > q.size {
				return
			}
			q.cur += w.n
			q.waiting[c].Remove(e)
			close(w.ready)
		}
	}
}
