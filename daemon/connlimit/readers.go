package connlimit

import (
	"container/list"
	"net"
	"sync"
	"time"
)

// readers are the connections over the cap whose request line is being
// read, oldest first. Past maxReading, the oldest is ended (its read times
// out and it is refused): an HTTP client's spare dials connect and send
// nothing, and in a storm of them a fixed set of places would be full of
// them when a health check came.
type readers struct {
	mu    sync.Mutex
	order list.List // of net.Conn, oldest first
	at    map[net.Conn]*list.Element
}

// add adds c and ends the oldest past max.
func (r *readers) add(c net.Conn, max int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at == nil {
		r.at = map[net.Conn]*list.Element{}
	}
	r.at[c] = r.order.PushBack(c)
	for r.order.Len() > max {
		old := r.order.Remove(r.order.Front()).(net.Conn)
		delete(r.at, old)
		_ = old.SetReadDeadline(time.Now())
	}
}

// remove takes c out once its request line is read, or its read ended.
func (r *readers) remove(c net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.at[c]; ok {
		r.order.Remove(e)
		delete(r.at, c)
	}
}

// endAll ends every read (the listener closes).
func (r *readers) endAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.at {
		_ = c.SetReadDeadline(time.Now())
	}
}
