package control

import (
	"context"
	"errors"

	"github.com/gpulet/gpuletd/gpulet"
)

// capacityTol is Capacity's relative precision.
const capacityTol = 0.01

// Capacity is the largest factor of the load in's demands are planned for
// that the planner algo places in full on in's GPUs, to 1%: how far that
// load may grow, in the same mix, before a plan leaves part of it unplaced
// and FairShare starts to refuse. It is the planner's own limit, which
// Plan's headroom keeps away from. A model with less than MinPlanRate of
// traffic stays planned at MinPlanRate, unscaled (an idle model's place
// is no share of the load to grow), unless no model has more: then all
// grow alike. When ctx ends first the search stops at the largest factor
// found to fit so far and atLeast says so; it does too when the load still
// fits at gpulet.MaxScale times itself, where the search stops. No demands or no GPUs: 0; a
// demand that fits at no rate: 0 too (Placeable leaves such demands out).
func Capacity(ctx context.Context, algo gpulet.Algo, in gpulet.Input, opts gpulet.Options) (scale float64, atLeast bool, err error) {
	if len(in.Demands) == 0 || len(in.GPUs) == 0 {
		return 0, false, nil
	}
	fits := func(s float64) (bool, error) {
		if ctx.Err() != nil {
			atLeast = true
			return false, nil
		}
		p, err := gpulet.Run(ctx, algo, scaledLoad(in, s), opts)
		if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			atLeast = true
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return len(p.Unscheduled) == 0, nil
	}
	scale, err = gpulet.LargestScale(fits, capacityTol)
	return scale, atLeast || scale >= gpulet.MaxScale, err
}

// Placeable is in less the demands p, a plan of in, found to fit at no
// rate (gpulet.Plan.Unplaceable: no profile, more memory than any gpu-let
// has…): a load that holds one has no Capacity but 0, though the others may
// grow as far as without it.
func Placeable(in gpulet.Input, p *gpulet.Plan) gpulet.Input {
	return without(in, p.Unplaceable)
}

// scaledLoad is in with the load Capacity scales multiplied by s: every
// demand's rate of MinPlanRate or more, or every demand's MinPlanRate when
// none has as much; the others stay at MinPlanRate.
func scaledLoad(in gpulet.Input, s float64) gpulet.Input {
	traffic := busy(in)
	return withRates(in, func(_ int, r float64) float64 {
		if traffic && r < MinPlanRate {
			return MinPlanRate
		}
		return PlanRate(r, 0) * s
	})
}

// PlannedLoad is the load in's demands are planned for, in req/s: the sum
// of their rates, each at least MinPlanRate.
func PlannedLoad(in gpulet.Input) float64 {
	return loadOf(scaledLoad(in, 1))
}

// CapacityRate is the load, in req/s, at a Capacity of scale: the load
// scaled, and the idle models' minimum.
func CapacityRate(in gpulet.Input, scale float64) float64 {
	return loadOf(scaledLoad(in, scale))
}

func loadOf(in gpulet.Input) float64 {
	total := 0.0
	for _, d := range in.Demands {
		total += d.Rate
	}
	return total
}
