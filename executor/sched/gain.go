package sched

import "time"

// Deferral only where it gains (deferred policy).
//
// A deferred batch that could still grow waits for more requests up to its
// frontrun. Two rules bound that wait; each compares what one more request
// would save with what waiting for it costs:
//
//   - the gain rule: a batch of n waits for more only while one more request
//     lowers the per-request cost ℓ(b)/b by at least MinDeferralGain;
//   - the idle rule: while the gpu-let is free, a batch of n waits for its
//     next request at most IdleWaitFactor times the gpu time that request
//     would save, (n+1)·ℓ(n)/n − ℓ(n+1) (β/n for ℓ(b) = α·b + β), counted
//     from the later of the last arrival and the moment the gpu-let freed,
//     and less on a gpu-let busy a small part of its recent time, where
//     the time saved buys nothing (busy_share.go). Idle time is lost for
//     good, and under bursty arrivals a long gap says the next request is
//     far away: the batch that waited then runs into the next burst, and
//     its old head bounds the burst's batch. Under steady arrivals the next
//     request comes well within the bound and nothing changes.
//
// Measured (docs/BENCHMARKS.md, deferred-vs-eager and symphony-table2): the
// idle rule brought deferred's losses on the weak- and mixed-batching subsets
// under Gamma(0.1) and Gamma(0.3) arrivals down to eager's (1.19% → 1.01% of
// the requests on mixed at 1.5x the SLOs, eager 1.03%; 1.05% → 0.86% on weak
// Gamma(0.3), eager 0.82%), kept the strong subset's losses (0.64% against
// eager's 20% at 10 000 req/s) and left Table 2 as it was. A factor of 1 cut
// into the strong subset's batches (1.5% lost at 10 000 req/s); 3 left more of
// the weak subsets' loss.

// MinDeferralGain is the least drop in per-request cost ℓ(b)/b that one more
// request must bring for the deferred policy to wait for it. Below it a
// model's batches are dispatchable at once: a model whose cost per request
// barely falls with the batch size (a BERT-like ℓ(b) = 7.35·b + 0.22 ms)
// would otherwise be held to its frontrun for nothing, and the next burst
// would collide with it. 2% is measured (docs/BENCHMARKS.md, deferred-vs-
// eager and symphony-table2): 3% cut Table 2's ResNet50 (ℓ(b) = 1.053·b +
// 5.072 ms, which gains 2% per request up to batch 12) to batches of 11 and
// below Symphony's goodput, 1% let weak models wait into bursts again.
const MinDeferralGain = 0.02

// IdleWaitFactor bounds how long a batch waits on a free gpu-let for its
// next request: this many times the gpu time that request would save (the
// idle rule above).
const IdleWaitFactor = 2

// deferGains lists, per queue length n in 0..MaxBatch, whether a batch of n
// gains enough from one more request to wait for it:
// ℓ(n+1)/(n+1) ≤ (1 − MinDeferralGain)·ℓ(n)/n. n = 0 is true (nothing waits).
func deferGains(l Latency) []bool {
	maxB := l.MaxBatch()
	out := make([]bool, maxB+1)
	if maxB > 0 {
		out[0] = true
	}
	for n := 1; n < maxB; n++ {
		now := float64(l.At(n)) / float64(n)
		next := float64(l.At(n+1)) / float64(n+1)
		out[n] = next <= (1-MinDeferralGain)*now
	}
	return out
}

// idleWaits lists, per queue length n in 0..MaxBatch, how long a batch of n
// waits on a free gpu-let for one more request: IdleWaitFactor times the gpu
// time that request saves, (n+1)·ℓ(n)/n − ℓ(n+1), never below 0. n = 0 and
// n = MaxBatch are 0 (nothing waits, a full batch cannot grow).
func idleWaits(l Latency) []time.Duration {
	maxB := l.MaxBatch()
	out := make([]time.Duration, maxB+1)
	for n := 1; n < maxB; n++ {
		out[n] = idleWait(l, n)
	}
	return out
}

// idleWait is idleWaits' entry for a batch of n, 1 ≤ n < MaxBatch.
func idleWait(l Latency, n int) time.Duration {
	save := float64(l.At(n))*float64(n+1)/float64(n) - float64(l.At(n+1))
	return time.Duration(max(save, 0) * IdleWaitFactor)
}
