package planbench

import (
	"context"
	"fmt"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
)

// MaxRate is the JSON of `gpuletd bench maxrate`: per mix and planner the
// largest scale factor of the mix's Table 5 rates the planner schedules.
type MaxRate struct {
	Set   string                             `json:"set"`
	GPUs  int                                `json:"gpus"`
	Mixes map[string]map[gpulet.Algo]float64 `json:"mixes"`
	// Rates is the same in total req/s (scale × the mix's rate at scale 1).
	Rates map[string]map[gpulet.Algo]float64 `json:"rates"`
	// LowerBounds lists, per mix, the planners some of whose plans ran
	// past the node's PlanLimit: their figures are lower bounds.
	LowerBounds map[string][]gpulet.Algo `json:"lower_bounds,omitempty"`
}

// maxRateTol is the bisection's relative precision on the scale factor.
const maxRateTol = 1e-3

// RunMaxRate finds, for every mix and planner, the largest schedulable
// scale factor by bisection: double from 1 until the planner fails, then
// halve the bracket until it is within 0.1%.
func RunMaxRate(ctx context.Context, n *Node) (*MaxRate, error) {
	mixes, err := n.Mixes()
	if err != nil {
		return nil, err
	}
	res := &MaxRate{Set: n.Set.Name, GPUs: len(n.GPUs), Mixes: map[string]map[gpulet.Algo]float64{}, Rates: map[string]map[gpulet.Algo]float64{}}
	for _, x := range mixes {
		res.Mixes[x.Name] = map[gpulet.Algo]float64{}
		res.Rates[x.Name] = map[gpulet.Algo]float64{}
		total := 0.0
		for _, d := range x.Demands {
			total += d.Share * MixUnit
		}
		for _, algo := range gpulet.Algos() {
			s, bound, err := MaxScaleWithin(ctx, x, n.GPUs, algo, n.Options(), n.PlanLimit)
			if err != nil {
				return nil, fmt.Errorf("run maxrate: mix %s: %w", x.Name, err)
			}
			if bound {
				if res.LowerBounds == nil {
					res.LowerBounds = map[string][]gpulet.Algo{}
				}
				res.LowerBounds[x.Name] = append(res.LowerBounds[x.Name], algo)
			}
			res.Mixes[x.Name][algo] = s
			res.Rates[x.Name][algo] = s * total
		}
	}
	return res, nil
}

// MaxScale is the largest scale factor of the mix the planner schedules on
// these GPUs, to 0.1%.
func MaxScale(ctx context.Context, x Mix, gpus []gpulet.GPU, algo gpulet.Algo, opts gpulet.Options) (float64, error) {
	s, _, err := MaxScaleWithin(ctx, x, gpus, algo, opts, 0)
	return s, err
}

// MaxScaleWithin is MaxScale with every plan held to limit (none when 0): a
// plan that runs past it (ideal's exhaustive search near capacity) counts
// as not schedulable, and lowerBound says that happened, so the scale found
// is a lower bound on the planner's.
func MaxScaleWithin(ctx context.Context, x Mix, gpus []gpulet.GPU, algo gpulet.Algo, opts gpulet.Options, limit time.Duration) (scale float64, lowerBound bool, err error) {
	ok := func(s float64) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("find max scale of %s with %s: %w", x.Name, algo, err)
		}
		p, timedOut, err := planWithin(ctx, algo, x.Input(gpus, s), opts, limit)
		if err != nil || timedOut {
			lowerBound = lowerBound || timedOut
			return false, err
		}
		return p.Schedulable, nil
	}
	scale, err = gpulet.LargestScale(ok, maxRateTol)
	if err != nil {
		return 0, false, err
	}
	return scale, lowerBound, nil
}
