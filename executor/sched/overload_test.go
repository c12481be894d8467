package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// stepLatency is ℓ(1) = 2, ℓ(2) = 10, ℓ(3) = 11 ms: a fixed cost that appears
// at batch 2, so that one request per 2 ms beats two per 10.
func stepLatency(t *testing.T) Latency {
	t.Helper()
	l, err := NewLatency([]LatencyPoint{{Batch: 1, MS: 2}, {Batch: 2, MS: 10}, {Batch: 3, MS: 11}}, 1, nil, 0)
	require.NoError(t, err)
	return l
}

// TestHeadDropBestWindow: R0 runs 0..2; R1, R2 (d=12.5) and R3 (d=13) queue
// meanwhile. At 2, GETBATCH from the head is R1, R2 (2 + ℓ(2) = 12 ≤ 12.5 <
// 2 + ℓ(3)), after which R3 could not finish (12 + 2 > 13): serving from the
// head loses a queued request. The rule then takes the window with the most
// requests per unit of gpu time: with ℓ(1) = 2 and ℓ(2) = 10 that is one
// request, R1 alone (2..4). At 4, R2 and R3 can both be served from the head
// (4..6, 6..8), so nothing is dropped: all four are served, where GETBATCH
// from the head runs R1, R2 2..12 and loses R3 at 13 − 2 + 1 ns.
func TestHeadDropBestWindow(t *testing.T) {
	reqs := []Request{
		{ID: 0, Arrival: 0, Deadline: ms(2)},
		{ID: 1, Arrival: ms(1), Deadline: ms(12.5)},
		{ID: 2, Arrival: ms(1), Deadline: ms(12.5)},
		{ID: 3, Arrival: ms(1), Deadline: ms(13)},
	}
	tests := []struct {
		policy  Policy
		batches []dispatched
		rejects []rejected
	}{
		{Deferred{}, []dispatched{
			{At: 0, IDs: []uint64{0}}, {At: ms(2), IDs: []uint64{1}}, {At: ms(4), IDs: []uint64{2}}, {At: ms(6), IDs: []uint64{3}},
		}, nil},
		{Deferred{HeadOnly: true}, []dispatched{
			{At: 0, IDs: []uint64{0}}, {At: ms(2), IDs: []uint64{1, 2}},
		}, []rejected{{At: ms(11) + 1, ID: 3, Why: DeadlineUnreachable}}},
	}
	for _, tc := range tests {
		t.Run(tc.policy.String(), func(t *testing.T) {
			rec, _ := simulate(t, one(tc.policy, 0, stepLatency(t)), reqs)
			require.Equal(t, tc.batches, rec.dispatches)
			require.Equal(t, tc.rejects, rec.rejects)
			require.Zero(t, rec.infeasible)
		})
	}
}

// TestHeadDropOnlyWhenHeadLoses: the same queue, but R3 due at 14, so that it
// still fits after R1, R2 (12 + 2 ≤ 14): serving from the head loses nothing,
// and the batch is GETBATCH from the head although one request per 2 ms would
// serve more per unit of gpu time. deferred:ratio, which leaves GETBATCH
// whenever a window is better, runs all four alone.
func TestHeadDropOnlyWhenHeadLoses(t *testing.T) {
	reqs := []Request{
		{ID: 0, Arrival: 0, Deadline: ms(2)},
		{ID: 1, Arrival: ms(1), Deadline: ms(12.5)},
		{ID: 2, Arrival: ms(1), Deadline: ms(12.5)},
		{ID: 3, Arrival: ms(1), Deadline: ms(14)},
	}
	rec, _ := simulate(t, one(Deferred{}, 0, stepLatency(t)), reqs)
	require.Equal(t, []dispatched{{At: 0, IDs: []uint64{0}}, {At: ms(2), IDs: []uint64{1, 2}}, {At: ms(12), IDs: []uint64{3}}}, rec.dispatches)
	require.Empty(t, rec.rejects)
	rec, _ = simulate(t, one(ratioDrop, 0, stepLatency(t)), reqs)
	require.Equal(t, []dispatched{{At: 0, IDs: []uint64{0}}, {At: ms(2), IDs: []uint64{1}}, {At: ms(4), IDs: []uint64{2}}, {At: ms(6), IDs: []uint64{3}}}, rec.dispatches)
	require.Empty(t, rec.rejects)
}

// TestBestBatches: the batch size with the most requests per unit of time
// among 1..K.
func TestBestBatches(t *testing.T) {
	require.Equal(t, []int32{0, 1, 1, 1}, bestBatches(stepLatency(t)))
	require.Equal(t, []int32{0, 1, 2, 3, 4}, bestBatches(linear(t, 1, 5, 4)))
	// equal ratios: the larger batch
	flat, err := NewLatency([]LatencyPoint{{Batch: 1, MS: 2}, {Batch: 2, MS: 4}, {Batch: 3, MS: 7}}, 1, nil, 0)
	require.NoError(t, err)
	require.Equal(t, []int32{0, 1, 2, 2}, bestBatches(flat))
}

// flatTopWorkloads are one model on one gpu-let (the benchmark's synthetic
// model, SLO 25 ms; ResNet50 on an A100, Symphony Table 4) and ResNet50 on
// four gpu-lets behind the router, each with its 1x rate: about the eager
// capacity BenchmarkOverload measures (424.8, 1250 and 7003 req/s).
func flatTopWorkloads(t *testing.T) []struct {
	w    expWorkload
	peak float64
} {
	return []struct {
		w    expWorkload
		peak float64
	}{
		{expWorkload{name: "synth1", models: synthModels(t, 1), gpulets: 1}, 425},
		{expWorkload{name: "resnet50", models: a100Models(t, "ResNet50"), gpulets: 1}, 1250},
		{expWorkload{name: "resnet50x4", models: a100Models(t, "ResNet50"), gpulets: 4}, 7000},
	}
}

// TestFlatTop: Symphony's goodput stability (§3.5): offered beyond the
// capacity, goodput stays at least 95% of what it is at the capacity, with
// the default deferred policy, on one gpu-let and on four behind the router;
// below the capacity everything is served. Serving from the head, goodput at
// 2x falls below 70% of that at 1x on one gpu-let (64% for synth1, 29% for
// ResNet50 in BenchmarkOverload).
func TestFlatTop(t *testing.T) {
	for _, wl := range flatTopWorkloads(t) {
		t.Run(wl.w.name, func(t *testing.T) {
			good := map[float64]float64{}
			for _, load := range []float64{0.5, 1, 1.5, 2} {
				rec := newRecorder()
				res := wl.w.run(t, Deferred{}, load*wl.peak, 20000, 1, rec)
				require.Len(t, rec.answers, 20000)
				require.Zero(t, rec.infeasible)
				good[load] = res.goodput()
				if load > 1 {
					require.NotZero(t, res.Rejected[Dropped], "load %v: overload drops heads", load)
				}
			}
			require.GreaterOrEqual(t, good[0.5], 0.99*0.5*wl.peak, "%v", good)
			require.GreaterOrEqual(t, good[1.5], 0.95*good[1], "%v", good)
			require.GreaterOrEqual(t, good[2], 0.95*good[1], "%v", good)

			at1 := wl.w.run(t, Deferred{HeadOnly: true}, wl.peak, 20000, 1, nil)
			at2 := wl.w.run(t, Deferred{HeadOnly: true}, 2*wl.peak, 20000, 1, nil)
			require.Zero(t, at2.Rejected[Dropped])
			if wl.w.gpulets == 1 {
				require.Less(t, at2.goodput(), 0.7*at1.goodput(), "from the head goodput collapses")
			}
			t.Logf("goodput %v; from the head %.0f at 1x, %.0f at 2x", good, at1.goodput(), at2.goodput())
		})
	}
}

// TestHeadDropNeverWorse: below the capacity head dropping rejects no more
// requests than serving from the head (it acts only when the head would lose
// some of the queue anyway).
func TestHeadDropNeverWorse(t *testing.T) {
	for _, wl := range flatTopWorkloads(t)[:2] {
		for _, load := range []float64{0.2, 0.5, 0.8, 1} {
			t.Run(fmt.Sprintf("%s/load=%.1f", wl.w.name, load), func(t *testing.T) {
				def := wl.w.run(t, Deferred{}, load*wl.peak, 20000, 2, nil)
				head := wl.w.run(t, Deferred{HeadOnly: true}, load*wl.peak, 20000, 2, nil)
				require.LessOrEqual(t, def.Rejections(), head.Rejections())
			})
		}
	}
}
