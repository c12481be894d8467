package sched

// queue is one model's waiting requests in deadline order (ties in arrival
// order): a ring buffer whose length is a power of two. Requests usually
// arrive in deadline order (same SLO), so an insert is an append; a request
// with a tighter deadline is shifted into place from the tail.
type queue struct {
	buf  []Request
	head int
	n    int
}

const minQueueCap = 16

func (q *queue) mask() int { return len(q.buf) - 1 }

// at returns the i-th request from the head (0 ≤ i < n).
func (q *queue) at(i int) *Request { return &q.buf[(q.head+i)&q.mask()] }

// front returns the head (n > 0).
func (q *queue) front() *Request { return &q.buf[q.head] }

// insert places r in deadline order and returns its index from the head.
func (q *queue) insert(r Request) int {
	if q.n == len(q.buf) {
		q.grow()
	}
	m := q.mask()
	i := q.n
	for i > 0 {
		prev := &q.buf[(q.head+i-1)&m]
		if prev.Deadline <= r.Deadline {
			break
		}
		q.buf[(q.head+i)&m] = *prev
		i--
	}
	q.buf[(q.head+i)&m] = r
	q.n++
	return i
}

// popFront removes and returns the head (n > 0).
func (q *queue) popFront() Request {
	r := q.buf[q.head]
	q.head = (q.head + 1) & q.mask()
	q.n--
	return r
}

// take removes the first k requests (k ≤ n) and appends them to dst.
func (q *queue) take(dst []Request, k int) []Request {
	end := q.head + k
	if end <= len(q.buf) {
		dst = append(dst, q.buf[q.head:end]...)
	} else {
		dst = append(dst, q.buf[q.head:]...)
		dst = append(dst, q.buf[:end-len(q.buf)]...)
	}
	q.head = end & q.mask()
	q.n -= k
	return dst
}

// grow doubles the ring, unwrapping it.
func (q *queue) grow() {
	c := max(2*len(q.buf), minQueueCap)
	nb := make([]Request, c)
	if q.n > 0 {
		first := copy(nb, q.buf[q.head:min(q.head+q.n, len(q.buf))])
		copy(nb[first:], q.buf[:q.n-first])
	}
	q.buf = nb
	q.head = 0
}

// reset empties the queue and drops its buffer.
func (q *queue) reset() { *q = queue{} }
