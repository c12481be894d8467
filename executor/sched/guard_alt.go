package sched

import "time"

// Two alternatives to the shared-gpu-let rule, measured against it and kept
// for that comparison (BenchmarkShared, docs/BENCHMARKS.md); no exported
// option selects them.
//
// guardChain keeps the work already queued schedulable. It looks at the chain
// of the batches every non-empty model would dispatch now, run back to back in
// order of head deadline (Jackson's earliest-due-date order, which meets all
// deadlines of such a set whenever any order does), with latest start
// T = min_j (d_j − Σ_{i≤j} ℓ_i(|B_i|)). The gpu-let never idles past T (then
// the chain's first batch goes), and a dispatchable batch c goes only if the
// rest still fits after it, now + ℓ_c(|B_c|) ≤ T without c, else the chain's
// first batch goes. It forms larger batches than guardBusy but leaves no slack
// for arrivals, which then push a tight chain past its deadlines.
//
// guardBlock makes a batch dispatchable already at d − ℓ(|B|) − b, b the
// longest batch another non-empty model would dispatch now, so that one such
// batch started just before cannot push it past its latest moment; the
// smallest latest moment goes first. Chains of blocking batches still push
// batches out.
//
// Both keep s.order, the non-empty models by head deadline (O(M) moves when a
// head changes), and walk it per decision.

// reorder moves m to its place in s.order after its queue changed.
func (s *Scheduler) reorder(m *model) {
	if m.q.n == 0 {
		if i := int(m.opos); i >= 0 {
			copy(s.order[i:], s.order[i+1:])
			s.order = s.order[:len(s.order)-1]
			for j := i; j < len(s.order); j++ {
				s.order[j].opos = int32(j)
			}
			m.opos = -1
		}
		return
	}
	d := m.q.front().Deadline
	m.hd = d
	i := int(m.opos)
	if i < 0 {
		s.order = append(s.order, m)
		i = len(s.order) - 1
	}
	for i > 0 && s.order[i-1].hd > d {
		s.order[i] = s.order[i-1]
		s.order[i].opos = int32(i)
		i--
	}
	for i+1 < len(s.order) && s.order[i+1].hd < d {
		s.order[i] = s.order[i+1]
		s.order[i].opos = int32(i)
		i++
	}
	s.order[i] = m
	m.opos = int32(i)
}

// chainStart returns the latest start of the chain of the batches every
// non-empty model except skip (nil: none) would dispatch at now, and the
// chain's first model (never and nil when there is none).
func (s *Scheduler) chainStart(now time.Duration, skip *model) (time.Duration, *model) {
	t := never
	var first *model
	for i := len(s.order) - 1; i >= 0; i-- {
		m := s.order[i]
		if m == skip {
			continue
		}
		k := batchAt(m, now)
		if k == 0 {
			continue
		}
		t = min(t, m.hd) - m.lat.At(k)
		first = m
	}
	return t, first
}

// chainDispatch is tryDispatch under guardChain (gpu-let free).
func (s *Scheduler) chainDispatch(now time.Duration) {
	t, first := s.chainStart(now, nil)
	if s.ready.min() > now {
		if t <= now && first != nil {
			skip, k := s.gather(first, now)
			s.dispatch(now, first, skip, k)
			return
		}
		s.altWake = t
		return
	}
	c := s.pick(now)
	if c == nil {
		return
	}
	skip, k := s.gather(c, now)
	if c != first && first != nil && t >= now {
		if tc, _ := s.chainStart(now, c); now+c.lat.At(k) > tc {
			c = first
			skip, k = s.gather(c, now)
		}
	}
	s.dispatch(now, c, skip, k)
}

// blockDispatch is tryDispatch under guardBlock (gpu-let free).
func (s *Scheduler) blockDispatch(now time.Duration) {
	var b1, b2 time.Duration // the two longest batches
	var m1 *model
	for _, m := range s.order {
		if k := batchAt(m, now); k > 0 {
			switch p := m.lat.At(k); {
			case p > b1:
				b1, b2, m1 = p, b1, m
			case p > b2:
				b2 = p
			}
		}
	}
	var best *model
	bestL, wake := never, never
	for _, m := range s.order {
		k := batchAt(m, now)
		if k == 0 {
			continue
		}
		l := m.hd - m.lat.At(k)
		b := b1
		if m == m1 {
			b = b2
		}
		if r := min(s.readyAt(m), l-b); r > now {
			wake = min(wake, r)
		} else if best == nil || l < bestL {
			best, bestL = m, l
		}
	}
	if best == nil {
		s.altWake = wake
		return
	}
	skip, k := s.gather(best, now)
	s.dispatch(now, best, skip, k)
}
