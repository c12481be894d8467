package planbench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
)

// PlannerTime is the JSON of `gpuletd bench planner`: the median wall time
// of one gpulet-int plan, ms.
type PlannerTime struct {
	Set    string  `json:"set"`
	MS5x4  float64 `json:"ms_5x4"`
	MS64x8 float64 `json:"ms_64x8"`
	Runs   int     `json:"runs"`
}

// timingRuns is how many plans each timing takes the median of.
const timingRuns = 21

// RunPlannerTime times gpulet-int on 5 models and 4 GPUs and on 64 models
// and 8 GPUs, both Synthetic workloads of the node's profiles (the 5-model
// one is the set's models plus scaled copies). Each is the median of 21
// plans, each planned from scratch (no cache carries over).
func RunPlannerTime(ctx context.Context, n *Node) (*PlannerTime, error) {
	res := &PlannerTime{Set: n.Set.Name, Runs: timingRuns}
	for _, c := range []struct {
		k, g int
		out  *float64
	}{{5, 4, &res.MS5x4}, {64, 8, &res.MS64x8}} {
		in, err := n.Synthetic(c.k, c.g)
		if err != nil {
			return nil, err
		}
		var ms []float64
		for range timingRuns {
			t0 := time.Now()
			if _, err := gpulet.Run(ctx, gpulet.AlgoGpuletInt, in, n.Options()); err != nil {
				return nil, fmt.Errorf("time planner on %d models: %w", c.k, err)
			}
			ms = append(ms, float64(time.Since(t0).Microseconds())/1000)
		}
		slices.Sort(ms)
		*c.out = ms[len(ms)/2]
	}
	return res, nil
}
