package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSharedGpuletRule works the collision of deferred windows by hand: one
// gpu-let, models A and B with ℓ(b) = b + 5 ms. A1 (d=25) and B1 (d=22)
// arrive at 0, A2 (d=35) at 10.
//
// As published (solo, always): A's frontrun is 25 − ℓ(2) = 18, B's 22 − ℓ(2) = 15.
// B1 goes at 15 and runs to 21, through A's window [18, 19]; A1 can no longer
// finish (21 + 6 > 25) and is rejected at 25 − 6 + 1 ns. A2 alone then waits
// for its frontrun 35 − 7 = 28 and runs 28..34.
//
// deferred (default): at 0 both models have a request queued, so the gpu-let
// does not idle: B1 has the smaller latest moment (22 − 6 = 16 against 19) and
// runs 0..6. Then A alone waits on the free gpu-let, for its frontrun
// 25 − ℓ(2) = 18 but at most the idle bound 6 + 2·(2·ℓ(1) − ℓ(2)) = 16
// (gain.go); with A2 queued at 10 the bound is 10 + 2·(3·ℓ(2)/2 − ℓ(3)) = 15,
// before the frontrun 25 − ℓ(3) = 17: A1 and A2 go together at 15 (ends 22 ≤
// 25). Nothing is lost and A's batch grew to 2.
//
// eager: A1 at 0, the moment it arrives (before B1, at the same instant),
// B1 at 6, A2 (queued at 10) at 12, all alone.
func TestSharedGpuletRule(t *testing.T) {
	tests := []struct {
		policy  Policy
		batches []dispatched
		rejects []rejected
	}{
		{Deferred{Solo: true, Always: true}, []dispatched{
			{At: ms(15), Model: 1, IDs: []uint64{2}},
			{At: ms(28), Model: 0, IDs: []uint64{3}},
		}, []rejected{{At: ms(19) + 1, ID: 1, Why: DeadlineUnreachable}}},
		{Deferred{}, []dispatched{
			{At: 0, Model: 1, IDs: []uint64{2}},
			{At: ms(15), Model: 0, IDs: []uint64{1, 3}},
		}, nil},
		{Eager{}, []dispatched{
			{At: 0, Model: 0, IDs: []uint64{1}},
			{At: ms(6), Model: 1, IDs: []uint64{2}},
			{At: ms(12), Model: 0, IDs: []uint64{3}},
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.policy.String(), func(t *testing.T) {
			l := linear(t, 1, 5, 8)
			specs := []ExecutorSpec{{Config: Config{Policy: tc.policy}, Models: []ModelSpec{
				{ID: 0, ModelConfig: ModelConfig{Latency: l}}, {ID: 1, ModelConfig: ModelConfig{Latency: l}},
			}}}
			rec, st := simulate(t, specs, []Request{
				{ID: 1, Model: 0, Arrival: 0, Deadline: ms(25)},
				{ID: 2, Model: 1, Arrival: 0, Deadline: ms(22)},
				{ID: 3, Model: 0, Arrival: ms(10), Deadline: ms(35)},
			})
			require.Equal(t, tc.batches, rec.dispatches)
			require.Equal(t, tc.rejects, rec.rejects)
			require.Zero(t, st.Late)
		})
	}
}

// TestSharedGpuletPoisson: several models on ONE gpu-let, Poisson arrivals
// at about 30% of the capacity, where eager loses nothing.
//
//   - synth10: the benchmark's 10 models (ℓ(b) = b + 5 ms, SLOs 25–100 ms),
//     68 req/s in all (BenchCapacity(10, 1) is 227.8 req/s);
//   - merged5: five A100 models of Symphony's Table 4 with SLO 20 ms and
//     batches capped by the planner's duty-cycle rule, 95 req/s (the eager
//     capacity of BenchmarkShared is 317 req/s).
//
// The default deferred policy rejects no more than eager and forms larger
// batches; deferred as published (every batch waits for its frontrun) loses
// requests there, which is the case the shared-gpu-let rule exists for.
func TestSharedGpuletPoisson(t *testing.T) {
	workloads := []struct {
		name string
		w    expWorkload
		rate float64
	}{
		{"synth10", expWorkload{models: synthModels(t, 10), gpulets: 1}, 68},
		{"merged5", expWorkload{models: mergedA100(t), gpulets: 1}, 95},
	}
	for _, wl := range workloads {
		for _, seed := range []uint64{1, 2} {
			t.Run(fmt.Sprintf("%s/seed=%d", wl.name, seed), func(t *testing.T) {
				run := func(p Policy) expResult {
					rec := newRecorder()
					res := wl.w.run(t, p, wl.rate, 20000, seed, rec)
					require.Len(t, rec.answers, 20000, "%s: every request answered", p)
					for id, n := range rec.answers {
						require.Equal(t, 1, n, "%s: request %d answered %d times", p, id, n)
					}
					require.Zero(t, rec.infeasible, p.String())
					require.Zero(t, res.Late, p.String())
					return res
				}
				eager, def, pub := run(Eager{}), run(Deferred{}), run(published)
				require.Zero(t, eager.Rejections(), "the load must be one eager serves without loss")
				require.LessOrEqual(t, def.Rejections(), eager.Rejections())
				require.Greater(t, def.MeanBatch(), eager.MeanBatch())
				require.Greater(t, pub.rejected(), 0.01, "deferred as published loses requests on a shared gpu-let")
				t.Logf("mean batch: eager %.3f, deferred %.3f; rejected as published %.2f%%",
					eager.MeanBatch(), def.MeanBatch(), 100*pub.rejected())
			})
		}
	}
}

// TestSharedRuleSparesOneModel: with one model per gpu-let the shared-gpu-let
// rule never applies: the default deferred policy and deferred:solo make the
// same decisions at the same instants (head dropping off in both, so that
// only the rule differs), under Poisson arrivals up to overload.
func TestSharedRuleSparesOneModel(t *testing.T) {
	w := expWorkload{models: synthModels(t, 1), gpulets: 1}
	for _, rate := range []float64{100, 400, 800} {
		a, b := newRecorder(), newRecorder()
		w.run(t, Deferred{HeadOnly: true}, rate, 20000, 4, a)
		w.run(t, Deferred{Solo: true, HeadOnly: true}, rate, 20000, 4, b)
		require.Equal(t, b.dispatches, a.dispatches, "rate %v", rate)
		require.Equal(t, b.rejects, a.rejects, "rate %v", rate)
	}
}

// TestSharedGpuletRunsReadyFirst: A (model 0, ℓ(b) = b + 5 ms) has the
// urgent head, B (model 1, capped at batch 2) a full batch. A0 (due 7) runs
// 0..6; B1, B2 (due 100) and A1 (due 20) arrive meanwhile, A2 (due 40) at
// 12.5. At 6 A's batch could still grow (its frontrun is 20 − ℓ(2) = 13)
// and B's is full. When B's batch leaves A room (ℓ(2) = 7: 13 + ℓ(1) ≤ 20)
// it runs first, and A1 and A2 then go together at 13; when it does not
// (ℓ(2) = 14: 20 + ℓ(1) > 20), A1 runs first, alone, as the rule had it.
func TestSharedGpuletRunsReadyFirst(t *testing.T) {
	reqs := []Request{
		{ID: 1, Model: 0, Arrival: 0, Deadline: ms(7)},
		{ID: 2, Model: 1, Arrival: ms(1), Deadline: ms(100)},
		{ID: 3, Model: 1, Arrival: ms(2), Deadline: ms(100)},
		{ID: 4, Model: 0, Arrival: ms(3), Deadline: ms(20)},
		{ID: 5, Model: 0, Arrival: ms(12.5), Deadline: ms(40)},
	}
	tests := []struct {
		name   string
		alphaB float64
		betaB  float64
		first  []dispatched
	}{
		{"the full batch leaves room", 1, 5, []dispatched{
			{At: 0, Model: 0, IDs: []uint64{1}},
			{At: ms(6), Model: 1, IDs: []uint64{2, 3}},
			{At: ms(13), Model: 0, IDs: []uint64{4, 5}},
		}},
		{"the full batch would make the head miss", 2, 10, []dispatched{
			{At: 0, Model: 0, IDs: []uint64{1}},
			{At: ms(6), Model: 0, IDs: []uint64{4}},
			{At: ms(12), Model: 1, IDs: []uint64{2, 3}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			specs := []ExecutorSpec{{Models: []ModelSpec{
				{ID: 0, ModelConfig: ModelConfig{Latency: linear(t, 1, 5, 8)}},
				{ID: 1, ModelConfig: ModelConfig{Latency: linear(t, tc.alphaB, tc.betaB, 2)}},
			}}}
			rec, st := simulate(t, specs, reqs)
			require.GreaterOrEqual(t, len(rec.dispatches), len(tc.first))
			require.Equal(t, tc.first, rec.dispatches[:len(tc.first)])
			require.Zero(t, st.Rejections())
			require.Zero(t, st.Late)
		})
	}
}
