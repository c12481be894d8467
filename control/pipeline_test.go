package control

import (
	"math"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/pipeline"
	"github.com/stretchr/testify/require"
)

// perItem is ℓ(b) = ms·b up to batch 64.
func perItem(ms float64) pipeline.LatencyFunc {
	return func(b int) (float64, bool) { return ms * float64(b), b >= 1 && b <= 64 }
}

// twoTasks: A at 100/s per worker (accuracy 1) or 200/s (0.5), one B request
// per A request, B at 100/s (1) or 400/s (0.8); SLO 200 ms.
func twoTasks() *pipeline.Pipeline {
	return &pipeline.Pipeline{Name: "two", SLO: 200 * time.Millisecond, Tasks: []pipeline.Task{
		{Name: "A", Variants: []pipeline.Variant{
			{Name: "a1", Accuracy: 1, Fanout: 1, Latency: perItem(10), MaxBatch: 64},
			{Name: "a2", Accuracy: 0.5, Fanout: 1, Latency: perItem(5), MaxBatch: 64},
		}},
		{Name: "B", Variants: []pipeline.Variant{
			{Name: "b1", Accuracy: 1, Latency: perItem(10), MaxBatch: 64},
			{Name: "b2", Accuracy: 0.8, Latency: perItem(2.5), MaxBatch: 64},
		}},
	}}
}

func gpus(n int) []gpulet.GPU {
	var out []gpulet.GPU
	for i := range n {
		out = append(out, gpulet.GPU{ID: "gpu" + string(rune('0'+i)), Type: "t", MemoryMB: 1000, Backend: gpulet.BackendNone})
	}
	return out
}

// layoutOf is GPU id → model of a plan.
func layoutOf(t *testing.T, p *gpulet.Plan) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, g := range p.GPUs {
		for _, l := range g.GPULets {
			require.Len(t, l.Models, 1)
			out[g.ID] = l.Models[0].Name
		}
	}
	return out
}

// TestPlanPipelineLaysOutWholeGPUs: planned at PipelineUtilization 0.7, a1
// carries 70/s per GPU, a2 140, b1 70, b2 280.
func TestPlanPipelineLaysOutWholeGPUs(t *testing.T) {
	p := twoTasks()
	// 100/s with 20% headroom is 120/s: two GPUs of a1 and two of b1
	// (140/s each task); the fifth goes to the busiest, a1 (the first of
	// equals), at 120/3 = 40/s per GPU.
	pl, layout, err := PlanPipeline(p, ScaleJointly, PipelineDemand{Rate: 100}, gpus(5), nil)
	require.NoError(t, err)
	require.Equal(t, pipeline.HardwareScaling, pl.Scaling)
	require.Equal(t, 4, pl.Needed)
	require.Equal(t, 5, pl.Workers)
	require.Equal(t, map[string]string{"gpu0": "a1", "gpu1": "a1", "gpu2": "a1", "gpu3": "b1", "gpu4": "b1"}, layoutOf(t, layout))
	require.True(t, layout.Schedulable)
	g := layout.GPUs[0].GPULets[0]
	require.Equal(t, 100, g.Size)
	require.InDelta(t, 40, g.Models[0].Rate, 1e-9)
	require.InDelta(t, 200-2*pl.Tasks[1].BudgetMS, g.Models[0].SLOMS, 1e-9, "A keeps what B's two budgets leave")
	require.Equal(t, 5, layout.UsedGPUs())

	// 240/s (288 planned): accuracy scaling; the a1 workers it keeps stay
	// on GPUs that ran a1.
	cur := map[string]string{"gpu0": "b1", "gpu1": "b1", "gpu2": "a1", "gpu3": "a1", "gpu4": "a1"}
	pl, layout, err = PlanPipeline(p, ScaleJointly, PipelineDemand{Rate: 240}, gpus(5), cur)
	require.NoError(t, err)
	require.Equal(t, pipeline.AccuracyScaling, pl.Scaling)
	a1 := 0
	for gid, m := range layoutOf(t, layout) {
		if m == "a1" {
			a1++
			require.Equal(t, "a1", cur[gid], "a1 moved to %s", gid)
		}
	}
	require.Positive(t, a1)
	require.Equal(t, 5, layout.UsedGPUs())

	// Hardware scaling alone serves what full accuracy carries on five
	// GPUs, no more; per-task scaling follows the loads it is given.
	pl, _, err = PlanPipeline(p, ScaleHardware, PipelineDemand{Rate: 240}, gpus(5), nil)
	require.NoError(t, err)
	require.Equal(t, pipeline.HardwareScaling, pl.Scaling)
	require.Less(t, pl.Capacity, 240.0)
	pl, _, err = PlanPipeline(p, ScalePerTask, PipelineDemand{Rate: 100, Loads: []float64{100, 40}}, gpus(5), nil)
	require.NoError(t, err)
	require.InDelta(t, PlanRate(40, Headroom), pl.Tasks[1].Load, 1e-9)

	_, _, err = PlanPipeline(p, "fastest", PipelineDemand{Rate: 1}, gpus(5), nil)
	require.ErrorIs(t, err, ErrBadScaling)
}

// A model that serves two tasks is laid out for each of them, each worker
// at its own task's load; they were taken for one before (a worker's rate
// was the first task's, and a GPU kept for one took the other's place).
func TestPlanPipelineLaysOutAModelOfTwoTasks(t *testing.T) {
	p := twoTasks()
	p.Tasks[0].Variants = p.Tasks[0].Variants[:1]
	p.Tasks[0].Variants[0].Fanout = 3 // three B requests per A request
	p.Tasks[1].Variants = []pipeline.Variant{{Name: "a1", Accuracy: 1, Latency: perItem(10), MaxBatch: 64}}
	pl, layout, err := PlanPipeline(p, ScaleJointly, PipelineDemand{Rate: 20}, gpus(6), map[string]string{"gpu5": "a1"})
	require.NoError(t, err)
	require.Len(t, pl.Tasks, 2)
	rates := map[float64]int{} // a worker's rate → workers
	for _, g := range layout.GPUs {
		for _, l := range g.GPULets {
			require.Equal(t, "a1", l.Models[0].Name)
			rates[math.Round(l.Models[0].Rate*1000)/1000]++
		}
	}
	w0, w1 := pl.Tasks[0].Variants[0].Workers, pl.Tasks[1].Variants[0].Workers
	require.Equal(t, w0+w1, layout.UsedGPUs(), "a worker for each task's every worker")
	want := map[float64]int{}
	want[math.Round(pl.Tasks[0].Load/float64(w0)*1000)/1000] += w0
	want[math.Round(pl.Tasks[1].Load/float64(w1)*1000)/1000] += w1
	require.Equal(t, want, rates)
	require.InDelta(t, 3*pl.Tasks[0].Load, pl.Tasks[1].Load, 1e-9)
}

// TestPlanPipelineScalesUpWithRoom: going back to more accurate variants as
// the load falls needs ScaleUpMargin of room; going down is immediate, and
// a plan as accurate as the one in force is not held back.
func TestPlanPipelineScalesUpWithRoom(t *testing.T) {
	p := twoTasks()
	const workers = 4
	// Where full accuracy carries d but not d·ScaleUpMargin.
	full := pipeline.MaxDemand(p, pipeline.Options{Workers: workers, Utilization: PipelineUtilization, FullAccuracyOnly: true})
	d := full / (1 + Headroom) / 1.1
	fresh, err := PlanPipelineMix(p, ScaleJointly, PipelineDemand{Rate: d}, workers)
	require.NoError(t, err)
	require.InDelta(t, 1, fresh.Accuracy, 1e-9, "a first plan takes full accuracy")

	held, err := PlanPipelineMix(p, ScaleJointly, PipelineDemand{Rate: d, Accuracy: 0.8}, workers)
	require.NoError(t, err)
	require.Less(t, held.Accuracy, 1.0, "coming from 0.8, full accuracy lacks the room")
	require.InDelta(t, fresh.Demand, held.Demand, 1e-9, "planned for the same demand")

	low, err := PlanPipelineMix(p, ScaleJointly, PipelineDemand{Rate: d / 2, Accuracy: 0.8}, workers)
	require.NoError(t, err)
	require.InDelta(t, 1, low.Accuracy, 1e-9, "with room, back to full accuracy")

	same, err := PlanPipelineMix(p, ScaleJointly, PipelineDemand{Rate: d, Accuracy: 1}, workers)
	require.NoError(t, err)
	require.InDelta(t, 1, same.Accuracy, 1e-9, "full accuracy in force stays")

	busy := pipeline.MaxDemand(p, pipeline.Options{Workers: workers, Utilization: PipelineUtilization}) / (1 + Headroom) / 1.05
	down, err := PlanPipelineMix(p, ScaleJointly, PipelineDemand{Rate: busy, Accuracy: 1}, workers)
	require.NoError(t, err)
	require.Less(t, down.Accuracy, 1.0, "down at once as the load rises")
}
