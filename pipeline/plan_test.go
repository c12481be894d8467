package pipeline

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// linear is ℓ(b) = perItem·b ms up to batch 64: a worker serves 1000/perItem
// requests per second at every batch.
func linear(perItem float64) LatencyFunc {
	return func(b int) (float64, bool) { return perItem * float64(b), b >= 1 && b <= 64 }
}

// twoTasks is a pipeline whose plans can be worked out by hand: task A at
// 100/s per worker (accuracy 1) or 200/s (0.5), one B request per A request,
// task B at 100/s (1) or 400/s (0.8); half the 200 ms SLO is 100 ms of
// batches, so every batch size up to 8 fits either task.
func twoTasks() *Pipeline {
	return &Pipeline{Name: "two", SLO: 200 * time.Millisecond, Tasks: []Task{
		{Name: "A", Variants: []Variant{
			{Name: "a1", Accuracy: 1, Fanout: 1, Latency: linear(10), MaxBatch: 64},
			{Name: "a2", Accuracy: 0.5, Fanout: 1, Latency: linear(5), MaxBatch: 64},
		}},
		{Name: "B", Variants: []Variant{
			{Name: "b1", Accuracy: 1, Latency: linear(10), MaxBatch: 64},
			{Name: "b2", Accuracy: 0.8, Latency: linear(2.5), MaxBatch: 64},
		}},
	}}
}

func TestPlanForByHand(t *testing.T) {
	tests := []struct {
		name     string
		demand   float64
		scaling  string
		workers  int
		accuracy float64
		variants map[string]int // workers per variant
	}{
		{"low demand: one worker per task", 50, HardwareScaling, 2, 1, map[string]int{"a1": 1, "b1": 1}},
		{"full accuracy on every worker", 200, HardwareScaling, 4, 1, map[string]int{"a1": 2, "b1": 2}},
		// a1 on 3 workers carries 250; one b2 carries it at 0.8.
		{"classifier first", 250, AccuracyScaling, 4, 0.8, map[string]int{"a1": 3, "b2": 1}},
		// a1×2 takes 200 of 350, a2 the rest; one b2: (200/350 + 150/350·0.5)·0.8.
		{"then the first task", 350, AccuracyScaling, 4, (200.0/350 + 150.0/350*0.5) * 0.8, map[string]int{"a1": 2, "a2": 1, "b2": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := PlanFor(twoTasks(), tc.demand, Options{Workers: 4})
			require.NoError(t, err)
			require.Equal(t, tc.scaling, pl.Scaling)
			require.Equal(t, tc.workers, pl.Workers)
			require.InDelta(t, tc.accuracy, pl.Accuracy, 1e-9)
			got := map[string]int{}
			for _, tp := range pl.Tasks {
				for _, v := range tp.Variants {
					got[v.Variant] = v.Workers
				}
			}
			require.Equal(t, tc.variants, got)
			require.GreaterOrEqual(t, pl.Capacity, tc.demand*(1-1e-9))
		})
	}
}

func TestMaxDemandAndOverload(t *testing.T) {
	p := twoTasks()
	// Full accuracy: 2 + 2 workers at 100/s. Any variants: a2 and b2 on 2
	// workers each (400 and 800) or 3 and 1 (600 and 400): 400.
	require.InEpsilon(t, 200, MaxDemand(p, Options{Workers: 4, FullAccuracyOnly: true}), 1e-3)
	require.InEpsilon(t, 400, MaxDemand(p, Options{Workers: 4}), 1e-3)

	pl, err := PlanFor(p, 500, Options{Workers: 4})
	require.ErrorIs(t, err, ErrOverloaded)
	require.ErrorContains(t, err, "at most 400")
	require.InEpsilon(t, 400, pl.Demand, 1e-3)
	require.Equal(t, 4, pl.Workers)

	_, err = PlanFor(p, 250, Options{Workers: 4, FullAccuracyOnly: true})
	require.ErrorIs(t, err, ErrOverloaded)
	_, err = PlanFor(p, 10, Options{Workers: 1})
	require.ErrorIs(t, err, ErrOverloaded)
	_, err = PlanFor(p, math.NaN(), Options{Workers: 4})
	require.ErrorIs(t, err, ErrBadPipeline)
}

func TestPathAccuracyTable(t *testing.T) {
	p := twoTasks()
	// A table that makes a2 with b2 better than a1 with b2 turns the 250
	// req/s plan around: a2 on 2 workers (400/s) and b2 on 1.
	p.PathAccuracy = map[string]float64{PathKey("a1", "b2"): 0.3, PathKey("a2", "b2"): 0.6}
	pl, err := PlanFor(p, 250, Options{Workers: 4})
	require.NoError(t, err)
	require.InDelta(t, 0.6, pl.Accuracy, 1e-9)
	require.Equal(t, "a2", pl.Tasks[0].Variants[0].Variant)
	require.Equal(t, 1.0, p.FullAccuracy(), "a1/b1 is not in the table: the product")
}

func TestBudgetsFitHalfTheSLO(t *testing.T) {
	p := lokiTraffic(t)
	for _, d := range []float64{10, 50, 100, 200, 400} {
		pl, err := PlanFor(p, d, Options{Workers: 8})
		require.NoError(t, err)
		var sum float64
		for _, tp := range pl.Tasks {
			sum += tp.BudgetMS
			var share float64
			for _, v := range tp.Variants {
				share += v.Share
			}
			require.InDelta(t, 1, share, 1e-9)
		}
		require.LessOrEqual(t, sum, float64(p.SLO/2)/1e6, "demand %v", d)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(p *Pipeline)
		want string
	}{
		{"no SLO", func(p *Pipeline) { p.SLO = 0 }, "SLO"},
		{"no tasks", func(p *Pipeline) { p.Tasks = nil }, "no tasks"},
		{"no variants", func(p *Pipeline) { p.Tasks[1].Variants = nil }, `task "B" has no variants`},
		{"name twice in a task", func(p *Pipeline) { p.Tasks[1].Variants[1].Name = "b1" }, "used twice in the task"},
		{"accuracy", func(p *Pipeline) { p.Tasks[0].Variants[1].Accuracy = 1.5 }, "outside (0, 1]"},
		{"no profile", func(p *Pipeline) { p.Tasks[0].Variants[0].Latency = nil }, "no latency profile"},
		{"fanout", func(p *Pipeline) { p.Tasks[0].Variants[0].Fanout = math.Inf(1) }, "fanout"},
		{"batch 1", func(p *Pipeline) { p.Tasks[1].Variants[1].Latency = func(int) (float64, bool) { return 0, false } }, "batch of 1"},
		{"table", func(p *Pipeline) { p.PathAccuracy = map[string]float64{"a1/b1": 2} }, "outside [0, 1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := twoTasks()
			tc.edit(p)
			err := p.Validate()
			require.ErrorIs(t, err, ErrBadPipeline)
			require.ErrorContains(t, err, tc.want)
		})
	}
	require.NoError(t, twoTasks().Validate())
	// One model may serve two tasks, as one model may run two steps of a
	// Triton ensemble.
	p := twoTasks()
	p.Tasks[1].Variants[0].Name = "a1"
	require.NoError(t, p.Validate())
}
