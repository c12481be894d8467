package sched

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
