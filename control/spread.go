package control

import (
	"context"
	"slices"

	"github.com/gpulet/gpuletd/gpulet"
)

// idle says that in has models and none of them has traffic to plan for:
// every demand's rate (its estimate) is below MinPlanRate. A node that
// starts, or whose load has stopped, is idle.
func idle(in gpulet.Input) bool { return len(in.Demands) > 0 && !busy(in) }

// busy says that some demand of in has traffic to plan for: a rate (its
// estimate) of MinPlanRate or more.
func busy(in gpulet.Input) bool {
	return slices.ContainsFunc(in.Demands, func(d gpulet.Demand) bool { return d.Rate >= MinPlanRate })
}

// spread plans an idle node: every model of in is given the same share of
// the devices' time, the largest that places them all (each model's rate
// is that share of deviceRate, at least MinPlanRate), found by bisection
// as FairShare finds an overloaded node's. base is in's plan at the
// minimum rates, which places every model; it stands when no larger share
// fits. The plan returned, base included, is marked Spread.
//
// Planned at the minimum rates, an idle node packed its models onto as few
// gpu-lets as held them, and the first load to come met that packing: on
// four emulated V100s, a fresh daemon sent the short-skew mix at 0.9 of its
// max failed 41 of alexnet's first 98 requests, which ran on a whole GPU
// beside resnet50's long batches, until the first surge's plan served it
// two seconds later. Spread, every model has the room the node can give it
// alone, and a load up to that share is served from its first request.
func spread(ctx context.Context, algo gpulet.Algo, in gpulet.Input, opts gpulet.Options, base *gpulet.Plan) (*gpulet.Plan, error) {
	perDevice := deviceRates(in)
	at := func(c float64) (*gpulet.Plan, error) {
		return run(ctx, algo, withRates(in, func(i int, _ float64) float64 { return max(c*perDevice[i], MinPlanRate) }), opts)
	}
	// No model's share is more than the whole node.
	_, best, err := largestPlaced(0, float64(len(in.GPUs)), fairSteps, base, at)
	if err != nil {
		return nil, err
	}
	best.Spread = true // also base: the plan of an idle node, which KeepPlan keeps while it is idle
	return best, nil
}
