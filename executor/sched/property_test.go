package sched

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPoissonProperties: Poisson arrivals on one gpu-let (ℓ(b) = b + 5 ms, max
// batch 32), at loads eager serves without a single rejection.
//
//   - every policy answers every request exactly once (completed in a batch
//     or rejected), and no completed batch ends after any of its requests'
//     deadlines (ℓ is exact in the simulation);
//   - deferred forms larger batches on average than eager.
func TestPoissonProperties(t *testing.T) {
	workloads := []struct {
		name  string
		slos  []float64 // ms, one model each
		rate  float64   // per model, req/s
		count uint64
	}{
		{"one model", []float64{50}, 150, 20000},
		{"three models", []float64{30, 50, 80}, 50, 20000},
	}
	policies := []Policy{Eager{}, Deferred{}, Timeout{K: ms(5)}, Flex{}, Flex{Preempt: true},
		published, sharedOnly}
	for _, w := range workloads {
		for _, seed := range []uint64{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/seed=%d", w.name, seed), func(t *testing.T) {
				var models []ModelSpec
				var streams []Stream
				for i, slo := range w.slos {
					models = append(models, ModelSpec{ID: ModelID(i), ModelConfig: ModelConfig{Latency: linear(t, 1, 5, 32)}})
					streams = append(streams, Stream{Model: ModelID(i), Rate: w.rate, SLO: ms(slo)})
				}
				mean := map[string]float64{}
				for _, p := range policies {
					src, err := NewPoissonSource(streams, w.count, seed)
					require.NoError(t, err)
					rec := newRecorder()
					sim, err := NewSim([]ExecutorSpec{{Config: Config{Policy: p}, Models: models}}, rec)
					require.NoError(t, err)
					st, err := sim.Run(src)
					require.NoError(t, err)

					require.Equal(t, w.count, st.Requests, p.String())
					require.Len(t, rec.answers, int(w.count), "%s: every request answered", p)
					for id, n := range rec.answers {
						require.Equal(t, 1, n, "%s: request %d answered %d times", p, id, n)
					}
					require.Equal(t, w.count, st.Completed+st.Rejections(), p.String())
					require.Zero(t, rec.late, "%s: a batch ended after a deadline", p)
					require.Zero(t, rec.infeasible, "%s: a batch was dispatched that cannot meet a deadline", p)
					require.Zero(t, st.Late, p.String())
					if _, isEager := p.(Eager); isEager {
						require.Zero(t, st.Rejections(), "the load must be one eager serves without drops")
					}
					mean[p.String()] = st.MeanBatch()
				}
				require.Greater(t, mean["deferred"], mean["eager"], "mean batch sizes %v", mean)
			})
		}
	}
}

// TestEveryPolicyUnderOverload: at twice the capacity, answers stay exactly
// once and on time for every policy (the overload is shed by rejections).
func TestEveryPolicyUnderOverload(t *testing.T) {
	for _, p := range []Policy{Eager{}, Deferred{}, Timeout{K: ms(2)}, Flex{}, Flex{Preempt: true}, published, chainGuard, blockGuard, ratioDrop} {
		t.Run(p.String(), func(t *testing.T) {
			var models []ModelSpec
			var streams []Stream
			for i := range 4 {
				models = append(models, ModelSpec{ID: ModelID(i), ModelConfig: ModelConfig{Latency: linear(t, 1, 5, 32), MaxQueue: 64}})
				streams = append(streams, Stream{Model: ModelID(i), Rate: 600, SLO: ms(25 + 20*float64(i))})
			}
			src, err := NewPoissonSource(streams, 30000, 9)
			require.NoError(t, err)
			rec := newRecorder()
			sim, err := NewSim([]ExecutorSpec{{Config: Config{Policy: p}, Models: models}}, rec)
			require.NoError(t, err)
			st, err := sim.Run(src)
			require.NoError(t, err)
			require.Len(t, rec.answers, 30000)
			for id, n := range rec.answers {
				require.Equal(t, 1, n, "request %d", id)
			}
			require.Zero(t, rec.late)
			require.Zero(t, rec.infeasible)
			require.NotZero(t, st.Rejections())
			require.Equal(t, st.Completed+st.Rejections(), st.Requests)
		})
	}
}

// TestRoutedPoissonProperties: two models over three gpu-lets (model 0 on
// all three, model 1 on two of them), Poisson arrivals, router in front:
// every request is answered exactly once and on time, for every policy.
func TestRoutedPoissonProperties(t *testing.T) {
	for _, p := range []Policy{Deferred{}, Eager{}, Timeout{K: ms(3)}, Flex{Preempt: true}, published} {
		t.Run(p.String(), func(t *testing.T) {
			l := linear(t, 1, 5, 32)
			m0 := ModelSpec{ID: 0, ModelConfig: ModelConfig{Latency: l}}
			m1 := ModelSpec{ID: 1, ModelConfig: ModelConfig{Latency: l}}
			specs := []ExecutorSpec{
				{Config: Config{Policy: p}, Models: []ModelSpec{m0}, Weight: 2},
				{Config: Config{Policy: p}, Models: []ModelSpec{m0, m1}},
				{Config: Config{Policy: p}, Models: []ModelSpec{m0, m1}},
			}
			src, err := NewPoissonSource([]Stream{{Model: 0, Rate: 600, SLO: ms(40)}, {Model: 1, Rate: 200, SLO: ms(60)}}, 30000, 5)
			require.NoError(t, err)
			rec := newRecorder()
			sim, err := NewSim(specs, rec)
			require.NoError(t, err)
			st, err := sim.Run(src)
			require.NoError(t, err)
			require.Len(t, rec.answers, 30000)
			for id, n := range rec.answers {
				require.Equal(t, 1, n, "request %d", id)
			}
			require.Zero(t, rec.late)
			require.Zero(t, rec.infeasible)
			require.Equal(t, st.Requests, st.Completed+st.Rejections())
			used := map[int]bool{}
			for _, d := range rec.dispatches {
				used[d.Exec] = true
			}
			require.Len(t, used, 3, "every gpu-let serves")
			t.Logf("%s: mean batch %.2f, rejected %d", p, st.MeanBatch(), st.Rejections())
		})
	}
}

// TestRoutedOneModelPerGpulet: one model over three gpu-lets that serve it
// alone, Poisson arrivals, router in front. Deferred loses nothing and forms
// larger batches than eager: the staggering of Symphony §3.3 under random
// arrivals.
func TestRoutedOneModelPerGpulet(t *testing.T) {
	mean := map[string]float64{}
	for _, p := range []Policy{Deferred{}, Eager{}} {
		l := linear(t, 1, 5, 32)
		var specs []ExecutorSpec
		for range 3 {
			specs = append(specs, ExecutorSpec{Config: Config{Policy: p}, Models: []ModelSpec{{ID: 0, ModelConfig: ModelConfig{Latency: l}}}})
		}
		src, err := NewPoissonSource([]Stream{{Model: 0, Rate: 600, SLO: ms(40)}}, 30000, 5)
		require.NoError(t, err)
		sim, err := NewSim(specs, nil)
		require.NoError(t, err)
		st, err := sim.Run(src)
		require.NoError(t, err)
		require.Zero(t, st.Rejections(), p.String())
		require.Equal(t, st.Requests, st.Completed)
		mean[p.String()] = st.MeanBatch()
	}
	require.Greater(t, mean["deferred"], mean["eager"], "%v", mean)
}
