package sched

import "time"

// readyAt is when m's batch becomes dispatchable under the policy, assuming no
// further arrival (never for an empty queue).
//
// deferred: the frontrun moment d − ℓ(n+1) of the whole queue (n requests,
// n < MaxBatch; d the earliest deadline). Before it a batch one larger would
// still be feasible, so waiting can only grow the batch; from it on it cannot
// (Symphony §3.1), and when the queue is deadline-limited (GETBATCH takes
// fewer than n) that moment has already passed. A queue of MaxBatch or more
// can grow no further: dispatchable at once. With the gain rules (gain.go)
// a batch whose next request gains too little is dispatchable at once, and
// one that waits does so at most its idle bound after the later of its last
// arrival and the gpu-let's last batch end.
// timeout: the earlier of the deferred moment and the earliest arrival in the
// forming batch plus K.
// eager, flex: at once.
func (s *Scheduler) readyAt(m *model) time.Duration {
	n := m.q.n
	if n == 0 {
		return never
	}
	switch s.pol.kind {
	case kindDeferred:
		if n >= m.maxB || (s.pol.gain && !m.gains[n]) {
			return always
		}
		t := m.q.front().Deadline - m.lat.At(n+1)
		if s.pol.gain {
			from := max(m.lastArrival, s.freed)
			t = min(t, from+time.Duration(float64(m.idle[n])*s.busyShare.idleScale(from)))
		}
		return t
	case kindTimeout:
		t := always
		if n < m.maxB {
			t = m.q.front().Deadline - m.lat.At(n+1)
		}
		return min(t, m.amin+s.pol.timeout)
	}
	return always
}

// expiryOf is the first instant m's head cannot finish even alone: the
// smallest t with t + ℓ(1) > d, i.e. d − ℓ(1) + 1ns.
func expiryOf(m *model) time.Duration {
	if m.q.n == 0 {
		return never
	}
	return m.q.front().Deadline - m.l1 + 1
}

// rekey refreshes m's entries in both timer heaps (and its place in s.order
// for guard_alt.go).
func (s *Scheduler) rekey(m *model) {
	s.expiry.set(m.id, expiryOf(m))
	s.ready.set(m.id, s.readyAt(m))
	if s.pol.guard == guardChain || s.pol.guard == guardBlock {
		s.reorder(m)
	}
}

// enqueue inserts r into m's queue and refreshes m's timers.
func (s *Scheduler) enqueue(m *model, r Request) {
	i := m.q.insert(r)
	if s.pol.kind == kindTimeout {
		switch {
		case i != m.q.n-1: // not appended: the first maxB changed
			s.recomputeAmin(m)
		case i < m.maxB && (m.q.n == 1 || r.Arrival < m.amin):
			m.amin = r.Arrival
		}
	}
	s.rekey(m)
}

// recomputeAmin sets m.amin over the first min(n, maxB) queued requests.
func (s *Scheduler) recomputeAmin(m *model) {
	a := never
	for i := range min(m.q.n, m.maxB) {
		a = min(a, m.q.at(i).Arrival)
	}
	m.amin = a
}

func (s *Scheduler) reject(now time.Duration, r Request, why Reason) {
	s.stats.Rejected[why]++
	s.sink.Reject(now, r, why)
}

// advance is Advance after the clock check.
func (s *Scheduler) advance(now time.Duration) {
	s.expire(now)
	s.tryDispatch(now)
}

// expire rejects, with DeadlineUnreachable, every queued request that can no
// longer finish even alone. Queues are deadline-ordered and ℓ(1) is one value
// per model, so only heads need checking.
func (s *Scheduler) expire(now time.Duration) {
	for s.expiry.min() <= now {
		m := s.models[s.expiry.top()]
		for m.q.n > 0 && now+m.l1 > m.q.front().Deadline {
			s.reject(now, m.q.popFront(), DeadlineUnreachable)
		}
		if s.pol.kind == kindTimeout {
			s.recomputeAmin(m)
		}
		s.rekey(m)
	}
}

// batchAt is GETBATCH: the largest prefix of m's queue that, started at now,
// finishes by its earliest deadline (the head's), capped at MaxBatch. A head
// that ℓ says is late but the admission ℓ(1) still lets finish (see
// SetLatencies) runs alone: 1.
func batchAt(m *model, now time.Duration) int {
	if m.q.n == 0 {
		return 0
	}
	d := m.q.front().Deadline
	if k := m.lat.Largest(d-now, m.q.n); k > 0 || now+m.l1 > d {
		return k
	}
	return 1
}

// tryDispatch starts a batch if the gpu-let is free and some model's batch is
// dispatchable, or, under the deferred policy's shared-gpu-let rule, when two
// or more models have requests queued (guard.go).
func (s *Scheduler) tryDispatch(now time.Duration) {
	s.altWake = never
	if s.busy {
		return
	}
	if s.guarded() {
		s.guardedDispatch(now)
		return
	}
	if s.ready.min() > now {
		return
	}
	if m := s.pick(now); m != nil {
		skip, k := s.gather(m, now)
		s.dispatch(now, m, skip, k)
	}
}

// pick chooses among the models whose batch is dispatchable at now, as the
// policy says:
//
//	deferred, timeout: smallest latest moment d − ℓ(|B|);
//	eager:             earliest head deadline;
//	flex:              largest batch, then earliest head deadline;
//
// remaining ties go to the smaller model id. |B| is GETBATCH from the head.
func (s *Scheduler) pick(now time.Duration) *model {
	if s.ready.min() > now {
		return nil
	}
	s.scratch, s.stack = s.ready.due(now, s.scratch[:0], s.stack)
	var best *model
	bestK := 0
	var bestKey time.Duration
	for _, id := range s.scratch {
		m := s.models[id]
		k := batchAt(m, now)
		if k == 0 { // cannot happen after expire; be safe
			continue
		}
		d := m.q.front().Deadline
		var key time.Duration
		switch s.pol.kind {
		case kindDeferred, kindTimeout:
			key = d - m.lat.At(k)
		case kindEager:
			key = d
		case kindFlex:
			if best != nil && k != bestK {
				if k > bestK {
					best, bestK, bestKey = m, k, d
				}
				continue
			}
			key = d
		}
		key += s.turnLag(m, now)
		if best == nil || key < bestKey || (key == bestKey && m.id < best.id) {
			best, bestK, bestKey = m, k, key
		}
	}
	return best
}

// dispatch starts a batch of m: the skip requests at the head are dropped
// (Dropped; window.go shows that none of them could finish after the batch)
// and the next k run.
func (s *Scheduler) dispatch(now time.Duration, m *model, skip, k int) {
	for range skip {
		s.reject(now, m.q.popFront(), Dropped)
	}
	end := now + m.lat.At(k)
	m.lastStart, m.lastEnd = now, end
	s.run = m.q.take(s.run[:0], k)
	if s.pol.kind == kindTimeout {
		s.recomputeAmin(m)
	}
	s.rekey(m)
	s.seq++
	s.busy = true
	s.altWake = never
	s.running = Batch{Seq: s.seq, Model: m.id, Requests: s.run, Start: now, End: end}
	s.stats.Batches++
	s.stats.Dispatched += uint64(k)
	s.sink.Dispatch(now, s.running)
}

// maybePreempt applies FLEX's preemption rule after a request of m arrived
// while a batch runs: if m's feasible batch is now at least λ times the
// running batch, the running batch is preempted. Only the arriving model's
// batch can have crossed the threshold: the running batch was the largest
// when it started (or no other batch was dispatchable), and other models'
// batches grow only by their own arrivals, each checked here.
func (s *Scheduler) maybePreempt(now time.Duration, m *model) {
	k := batchAt(m, now)
	if float64(k) < s.pol.lambda*float64(len(s.running.Requests)) {
		return
	}
	old := s.running
	s.busy = false
	s.running = Batch{}
	s.stats.Preemptions++
	s.sink.Preempt(now, old)
	// old.Requests aliases s.run, which is not written again before the next
	// dispatch in tryDispatch below.
	pm := s.model(old.Model)
	for _, r := range old.Requests {
		switch {
		case pm == nil:
			s.reject(now, r, ModelRemoved)
		case now+pm.l1 > r.Deadline:
			s.reject(now, r, Preempted)
		default:
			pm.q.insert(r) // re-queued past MaxQueue if need be: already admitted
		}
	}
	if pm != nil {
		s.rekey(pm)
	}
}
