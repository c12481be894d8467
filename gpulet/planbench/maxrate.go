package planbench

import (
	"context"
	"fmt"

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
			s, err := MaxScale(ctx, x, n.GPUs, algo, n.Options())
			if err != nil {
				return nil, fmt.Errorf("run maxrate: mix %s: %w", x.Name, err)
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
	ok := func(s float64) (bool, error) {
		p, err := gpulet.Run(ctx, algo, x.Input(gpus, s), opts)
		if err != nil {
			return false, err
		}
		return p.Schedulable, nil
	}
	lo, hi := 0.0, 1.0
	for {
		good, err := ok(hi)
		if err != nil {
			return 0, err
		}
		if !good {
			break
		}
		lo, hi = hi, hi*2
		if hi > 1<<20 {
			return lo, nil
		}
	}
	for hi-lo > maxRateTol*hi {
		mid := (lo + hi) / 2
		good, err := ok(mid)
		if err != nil {
			return 0, err
		}
		if good {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}
