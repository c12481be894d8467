package sched

import "time"

// dropRule is how a dispatched batch is gathered from the model's
// deadline-ordered queue.
type dropRule uint8

const (
	// dropNone: GETBATCH from the head, the largest prefix that finishes by
	// the head's deadline.
	dropNone dropRule = iota
	// dropRatio: the window of the queue with the most requests per unit of
	// gpu time, whenever it beats the head's batch; the requests before it
	// are dropped.
	dropRatio
	// dropPlan: as dropRatio, but only when serving from the head, batch
	// after batch from now on, would itself lose some of the queued requests.
	dropPlan
)

// gather returns the batch to dispatch for m at now: skip requests at the
// head are passed over and the next k form the batch, k ≥ 1 (m's head can
// still finish alone). Without head dropping skip is 0 and k is GETBATCH.
func (s *Scheduler) gather(m *model, now time.Duration) (skip, k int) {
	k = batchAt(m, now)
	n := m.q.n
	if s.pol.drop == dropNone || k >= n || k >= m.maxB {
		return 0, k
	}
	if s.pol.drop == dropPlan && !headPlanLoses(m, now) {
		return 0, k
	}
	bestK, bestL := k, m.lat.At(k)
	for i := 1; i < n; i++ {
		rem := n - i
		ki := m.lat.Largest(m.q.at(i).Deadline-now, rem)
		if ki > 0 {
			// more requests per unit of gpu time: ki/ℓ(ki) > bestK/ℓ(bestK)
			if li := m.lat.At(ki); int64(ki)*int64(bestL) > int64(bestK)*int64(li) {
				skip, bestK, bestL = i, ki, li
			}
		}
		if ki >= rem || ki >= m.maxB {
			break // later windows are no larger
		}
	}
	return skip, bestK
}

// headPlanLoses reports whether serving m's queued requests from the head,
// each batch GETBATCH and the next starting when it ends, from now on and
// with no other model in between, would leave some of them unable to finish
// by their deadline.
func headPlanLoses(m *model, now time.Duration) bool {
	t := now
	for i, n := 0, m.q.n; i < n; {
		d := m.q.at(i).Deadline
		if t+m.l1 > d {
			return true
		}
		k := m.lat.Largest(d-t, n-i)
		t += m.lat.At(k)
		i += k
	}
	return false
}
