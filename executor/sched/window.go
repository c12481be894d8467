package sched

import "time"

// Head dropping (deferred policy).
//
// Under overload a queue that is served from its head shrinks its batches:
// the head's deadline is always close, so GETBATCH from the head fits only a
// few requests, the gpu-let serves fewer requests per unit of time, the queue
// ages further, and goodput collapses (to about half the peak at twice the
// capacity, docs/BENCHMARKS.md). Symphony (§3.2, after Nexus) notes that
// batch gathering may instead drop the head of the queue to keep a larger
// batch.
//
// The rule (dropPlan, the default): when m's batch is dispatched at now,
//
//  1. if GETBATCH from the head holds the whole queue or MaxBatch requests,
//     or if serving the queue from the head, batch after batch from now on
//     (each GETBATCH, the next starting when it ends, no other model in
//     between), would finish every queued request by its deadline, the
//     batch is GETBATCH from the head, as before;
//  2. otherwise some queued requests are lost anyway, and the batch is the
//     window of the deadline-ordered queue that serves the most requests per
//     unit of gpu time: over every start i, the best k ≤ the largest batch
//     that starts at request i and meets its deadline, by k/ℓ(k) (ties: the
//     earlier start, then the larger k). The requests before the window are
//     dropped at once (Dropped, an SLO miss answered now rather than at
//     expiry).
//
// Why a passed-over request can never finish after the window (so dropping
// it loses nothing that could still be served): if request j < i could, then
// d_j ≥ now + ℓ(k) + ℓ(1) > now + ℓ(k), so a batch of k starting at j meets
// d_j, and the window starting at j is at least as good and comes first.
//
// Why it is never worse below the capacity: step 1 keeps Symphony's GETBATCH
// whenever the head loses nothing; the measured tables show equal or fewer
// rejections at every load up to the capacity. Cost: the head plan is
// O(n/|B|) per dispatch; the window search runs only when it fails, O(n)
// lookups of O(log MaxBatch) at most, and stops as soon as no later window
// (fewer requests left) can do better.

// dropRule is how a dispatched batch is gathered from the model's
// deadline-ordered queue.
type dropRule uint8

const (
	// dropNone: GETBATCH from the head.
	dropNone dropRule = iota
	// dropPlan: the rule above.
	dropPlan
	// dropRatio: a measured alternative: step 2 whenever its window is
	// better than GETBATCH from the head, without the head plan of step 1.
	dropRatio
)

// bestBatches returns, for K = 0..MaxBatch, the batch size k ≤ K with the
// most requests per unit of time k/ℓ(k), the largest on ties (0 for K = 0).
func bestBatches(l Latency) []int32 {
	best := make([]int32, l.MaxBatch()+1)
	for k := 1; k < len(best); k++ {
		b := int(best[k-1])
		if b == 0 || int64(k)*int64(l.At(b)) >= int64(b)*int64(l.At(k)) {
			b = k
		}
		best[k] = int32(b)
	}
	return best
}

// gather returns the batch to dispatch for m at now: the skip requests at the
// head are dropped and the next k form the batch, k ≥ 1 (m's head can still
// finish alone). Without head dropping skip is 0 and k is GETBATCH.
func (s *Scheduler) gather(m *model, now time.Duration) (skip, k int) {
	k = batchAt(m, now)
	n := m.q.n
	if s.pol.drop == dropNone || k >= n || k >= m.maxB {
		return 0, k
	}
	if s.pol.drop == dropPlan && !headPlanLoses(m, now) {
		return 0, k
	}
	bestK, bestL := k, m.lat.At(k) // GETBATCH from the head, to beat
	for i := range n {
		rem := n - i
		// the best any window starting here or later can do
		if c := int(m.best[min(rem, m.maxB)]); int64(c)*int64(bestL) <= int64(bestK)*int64(m.lat.At(c)) {
			break
		}
		ki := m.lat.Largest(m.q.at(i).Deadline-now, rem)
		if ki == 0 {
			continue
		}
		c := int(m.best[ki])
		if lc := m.lat.At(c); int64(c)*int64(bestL) > int64(bestK)*int64(lc) {
			skip, bestK, bestL = i, c, lc
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
		if k == 0 { // in time by the admission ℓ(1), late by ℓ (SetLatencies)
			return true
		}
		t += m.lat.At(k)
		i += k
	}
	return false
}
