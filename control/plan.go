package control

import (
	"context"
	"fmt"
	"slices"

	"github.com/gpulet/gpuletd/gpulet"
)

// headroomSteps bounds the bisection of the headroom when the full headroom
// does not fit: the headroom found is within 1/8 of the asked one below the
// largest that fits.
const headroomSteps = 3

// Plan runs the planner algo for in's demands, whose rates are the models'
// estimates, each planned at PlanRate(estimate, headroom). Headroom is room
// to grow, never a reason to place less: when the node cannot place every
// demand with the full headroom (near the node's capacity the planner then
// settles for another layout that places less of the estimate itself), Plan
// takes the largest headroom in [0, headroom] at which everything is placed,
// found by bisection. When even the estimates do not all fit, the node is
// overloaded and the full headroom's plan stands (what it leaves out is
// refused at the router, where it costs least).
func Plan(ctx context.Context, algo gpulet.Algo, in gpulet.Input, opts gpulet.Options, headroom float64) (*gpulet.Plan, error) {
	at := func(h float64) (*gpulet.Plan, error) {
		x := in
		x.Demands = slices.Clone(in.Demands)
		for i := range x.Demands {
			x.Demands[i].Rate = PlanRate(in.Demands[i].Rate, h)
		}
		p, err := gpulet.Run(ctx, algo, x, opts)
		if err != nil {
			return nil, fmt.Errorf("plan with %s: %w", algo, err)
		}
		return p, nil
	}
	full, err := at(headroom)
	if err != nil || len(full.Unscheduled) == 0 || headroom <= 0 {
		return full, err
	}
	best, err := at(0)
	if err != nil {
		return nil, err
	}
	if len(best.Unscheduled) > 0 {
		return full, nil
	}
	lo, hi := 0.0, headroom
	for range headroomSteps {
		mid := (lo + hi) / 2
		p, err := at(mid)
		if err != nil {
			return nil, err
		}
		if len(p.Unscheduled) == 0 {
			lo, best = mid, p
		} else {
			hi = mid
		}
	}
	return best, nil
}
