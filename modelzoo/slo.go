package modelzoo

import "time"

// minSLO is the smallest SLO the demo repository uses: 5 ms, the gpu-let
// paper's tightest SLO (LeNet, Table 4; shared/data/papers/gpulet-evaluation.yaml).
// It also keeps the small models schedulable on emulated devices: their
// "alexnet" curve takes 0.78 ms at batch 1 on a whole V100
// (shared/data/igniter/v100-mps-profile.jsonl), and a gpu-let must keep
// 2·L ≤ SLO, so anything under 1.6 ms could never be placed.
const minSLO = 5 * time.Millisecond

// sloFromBatch8 applies the demo repository's SLO rule to a model's
// measured CPU latency at batch 8: twice that latency, rounded up to the
// next 1-2-5 step (…, 500 µs, 1 ms, 2 ms, 5 ms, 10 ms, …), and never below
// minSLO. The gpu-let paper sets SLOs to twice the solo batch-32 latency;
// batch 8 keeps CPU demos responsive.
func sloFromBatch8(latency time.Duration) time.Duration {
	target := 2 * latency
	for decade := time.Microsecond; ; decade *= 10 {
		for _, step := range []time.Duration{1, 2, 5} {
			if slo := step * decade; slo >= target {
				return max(slo, minSLO)
			}
		}
	}
}
