package control

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/gpulet/gpuletd/gpulet"
)

// headroomSteps bounds the bisection of the headroom when the full headroom
// does not fit: the headroom found is within 1/8 of the asked one below the
// largest that fits.
const headroomSteps = 3

// fairSteps bounds the bisection of the fair-share cap at overload: the cap
// found is within 1/1024 of the largest demand below the largest that fits.
const fairSteps = 10

// Plan runs the planner algo for in's demands, whose rates are the models'
// estimates, each planned at PlanRate(estimate, headroom), the headroom
// room.Base and the model's room.Extra (the miss rule's). Headroom is room
// to grow, never a reason to place less: when the node cannot place every
// demand with the full headroom (near the node's capacity the planner then
// settles for another layout that places less of the estimate itself), Plan
// takes the largest headroom in [0, room.Base] at which everything is
// placed, found by bisection (each model's extra scaled alike). When even
// the estimates do not all fit, the node is overloaded and Plan shares it
// max-min fairly (FairShare): no model's flood takes the place of another's
// demand.
//
// A model no gpu-let can take at any rate (gpulet.Plan.Unplaceable: no
// profile, more memory than any gpu-let has…) does not make the node look
// overloaded: the others are planned as if it were not there, and it is
// reported unscheduled with its reason. Otherwise a model too large for the
// CPU's memory sent the node to the fair share with its first pass alone,
// which left a second model unplaced that fitted beside the first.
//
// Headroom is probed with elastic partitioning's first pass alone
// (gpulet.Options.WholeResidues): the second pass, which splits residues
// off MPS GPUs, serves to place the estimates, and only when they need it
// does it also size the headroom.
//
// An idle node (no model has traffic yet, or any longer) is not
// planned at the minimum rates but spread: every model gets the same share
// of the devices' time, as much as the node holds (spread; the plan's
// Spread is set). PlanPacked plans an idle node at the minimum rates.
func Plan(ctx context.Context, algo gpulet.Algo, in gpulet.Input, opts gpulet.Options, room Room) (*gpulet.Plan, error) {
	p, err := PlanPacked(ctx, algo, in, opts, room)
	if err != nil || !idle(in) {
		return p, err
	}
	for name := range p.Unscheduled {
		if !slices.Contains(p.Unplaceable, name) {
			return p, nil // not even the minimum rates fit
		}
	}
	rest := without(in, p.Unplaceable)
	if len(rest.Demands) == 0 {
		return p, nil
	}
	s, err := spread(ctx, algo, rest, opts, p)
	if err != nil || s == p || len(p.Unplaceable) == 0 {
		return s, err
	}
	return withUnplaceable(s, p), nil
}

// PlanPacked is Plan for in's estimates as they are, idle or not: an idle
// node is planned at the minimum rates, which packs its models onto as few
// gpu-lets as hold them (scheduler.idle_plan: pack).
func PlanPacked(ctx context.Context, algo gpulet.Algo, in gpulet.Input, opts gpulet.Options, room Room) (*gpulet.Plan, error) {
	headroom := room.Base
	withHeadroom := func(h float64) gpulet.Input {
		return withRates(in, func(i int, r float64) float64 { return PlanRate(r, room.at(in.Demands[i].Name, h)) })
	}
	firstPass := opts
	firstPass.WholeResidues = true
	probe := firstPass
	at := func(h float64) (*gpulet.Plan, error) { return run(ctx, algo, withHeadroom(h), probe) }
	full, err := at(headroom)
	if err != nil || len(full.Unscheduled) == 0 {
		return full, err
	}
	if rest := without(in, full.Unplaceable); len(rest.Demands) < len(in.Demands) {
		p, err := PlanPacked(ctx, algo, rest, opts, room)
		if err != nil {
			return nil, err
		}
		return withUnplaceable(p, full), nil
	}
	if headroom <= 0 {
		return FairShare(ctx, algo, withHeadroom(0), opts, full)
	}
	best, err := at(0)
	if err != nil {
		return nil, err
	}
	if len(best.Unscheduled) > 0 {
		probe = opts // the estimates need the second pass: so does the headroom
		if best, err = at(0); err != nil {
			return nil, err
		}
		if len(best.Unscheduled) > 0 {
			return FairShare(ctx, algo, withHeadroom(0), opts, full)
		}
		if p, err := at(headroom); err != nil || len(p.Unscheduled) == 0 {
			return p, err
		}
	}
	_, best, err = largestPlaced(0, headroom, headroomSteps, best, at)
	return best, err
}

// FairShare plans an overloaded node for in's demands (the rates to plan,
// PlanRate(estimate, 0) in Plan) max-min fairly in the devices' time: it
// finds, by bisection, the largest share C of one device such that every
// model's demand held to the rate C devices serve of it alone (deviceRate;
// at least MinPlanRate, a place each) is placed. Models asking less than
// their share get all of it and those asking more (a flood) share what the
// others leave, each the same time on the devices: a flood of a model a
// hundred times as costly as another holds the other to the same time, not
// to the same requests per second. When not every model can have even the
// lowest demand, the share falls below it. What the cap holds back is
// reported in the plan's Unscheduled with the reason; Admission refuses it
// for that model only. When not even MinPlanRate each fits (more models
// than the node can hold), the plan of the full demands, fallback, stands.
func FairShare(ctx context.Context, algo gpulet.Algo, in gpulet.Input, opts gpulet.Options, fallback *gpulet.Plan) (*gpulet.Plan, error) {
	if len(in.Demands) < 2 {
		return fallback, nil // nothing to share: a lone model gets what fits
	}
	perDevice := deviceRates(in)
	lowest, highest := math.Inf(1), 0.0
	for i, d := range in.Demands {
		lowest, highest = min(lowest, d.Rate/perDevice[i]), max(highest, d.Rate/perDevice[i])
	}
	// rateAt is demand i's rate at a share of c devices.
	rateAt := func(i int, c float64) float64 {
		return min(in.Demands[i].Rate, max(c*perDevice[i], MinPlanRate))
	}
	capped := func(c float64) (*gpulet.Plan, error) {
		return run(ctx, algo, withRates(in, func(i int, _ float64) float64 { return rateAt(i, c) }), opts)
	}
	// No model's share is more than the whole node.
	hi := min(highest, float64(len(in.GPUs)))
	lo := min(lowest, hi)
	best, err := capped(lo)
	if err != nil {
		return nil, err
	}
	if len(best.Unscheduled) > 0 {
		// Not every model gets even the lowest demand: the share falls
		// below it, down to MinPlanRate each, a place.
		lo, hi = 0, lo
		if best, err = capped(lo); err != nil {
			return nil, err
		}
		if len(best.Unscheduled) > 0 {
			return fallback, nil
		}
	}
	c, best, err := largestPlaced(lo, hi, fairSteps, best, capped)
	if err != nil {
		return nil, err
	}
	for i, d := range in.Demands {
		share := rateAt(i, c)
		if held := d.Rate - share; held > 0 {
			if best.Unscheduled == nil {
				best.Unscheduled = map[string]float64{}
			}
			if best.Reasons == nil {
				best.Reasons = map[string]string{}
			}
			best.Unscheduled[d.Name] = held
			best.Schedulable = false
			best.Reasons[d.Name] = fmt.Sprintf("the node is overloaded: its fair share is %.1f req/s, what %s serves of it (every model held back gets the same time; a model that asks less keeps all it asks); the rest is refused with 503", share, devicePercent(c))
		}
	}
	return best, nil
}

// deviceRates is deviceRate of each of in's demands, in order; 1 for one
// no device serves (Plan leaves such a model out before it shares the
// node, fairly or spread).
func deviceRates(in gpulet.Input) []float64 {
	out := make([]float64, len(in.Demands))
	for i, d := range in.Demands {
		if out[i] = deviceRate(d); !(out[i] > 0) {
			out[i] = 1
		}
	}
	return out
}

// deviceRate is the most requests/s one whole device serves of a model
// alone within its SLO: gpulet.AffordableRate at the size that serves the
// most per share of the device, scaled to the whole, over the model's
// profiles. The fair share at overload counts in it, so that a model's
// share is time on the devices whatever its requests cost; 0 when no size
// serves it.
func deviceRate(d gpulet.Demand) float64 {
	best := 0.0
	for _, p := range append([]*gpulet.Profile{d.Profile}, d.More...) {
		if p == nil {
			continue
		}
		for _, size := range p.Sizes() {
			if r, _, ok := gpulet.AffordableRate(p, d.SLOMS, size); ok && size > 0 {
				best = max(best, r*100/float64(size))
			}
		}
	}
	return best
}

// devicePercent writes a share of c devices' time: "12% of one device's
// time", "0.4% of …", or "2.5 devices' time".
func devicePercent(c float64) string {
	switch {
	case c > 1:
		return fmt.Sprintf("%.1f devices' time", c)
	case c >= 0.1:
		return fmt.Sprintf("%.0f%% of one device's time", 100*c)
	}
	return fmt.Sprintf("%.1f%% of one device's time", 100*c)
}

// largestPlaced bisects x over [lo, hi] in steps steps for the largest x
// whose plan, at(x), places every demand; best is the plan at lo, which
// does. It returns that x and its plan.
func largestPlaced(lo, hi float64, steps int, best *gpulet.Plan, at func(float64) (*gpulet.Plan, error)) (float64, *gpulet.Plan, error) {
	for range steps {
		mid := (lo + hi) / 2
		p, err := at(mid)
		if err != nil {
			return 0, nil, err
		}
		if len(p.Unscheduled) == 0 {
			lo, best = mid, p
		} else {
			hi = mid
		}
	}
	return lo, best, nil
}

// without is in less the demands named in names.
func without(in gpulet.Input, names []string) gpulet.Input {
	x := in
	x.Demands = slices.DeleteFunc(slices.Clone(in.Demands), func(d gpulet.Demand) bool { return slices.Contains(names, d.Name) })
	return x
}

// withUnplaceable is p, planned without full's unplaceable models, with
// them added back as full reports them: unscheduled, with their reasons.
func withUnplaceable(p, full *gpulet.Plan) *gpulet.Plan {
	if p.Unscheduled == nil {
		p.Unscheduled = map[string]float64{}
	}
	if p.Reasons == nil {
		p.Reasons = map[string]string{}
	}
	for _, name := range full.Unplaceable {
		p.Unscheduled[name] = full.Unscheduled[name]
		p.Reasons[name] = full.Reasons[name]
	}
	p.Unplaceable = slices.Clone(full.Unplaceable)
	p.Schedulable = false
	return p
}

// withRates is in with each demand's rate mapped by f, given the demand's
// index and rate.
func withRates(in gpulet.Input, f func(i int, rate float64) float64) gpulet.Input {
	x := in
	x.Demands = slices.Clone(in.Demands)
	for i := range x.Demands {
		x.Demands[i].Rate = f(i, in.Demands[i].Rate)
	}
	return x
}

func run(ctx context.Context, algo gpulet.Algo, in gpulet.Input, opts gpulet.Options) (*gpulet.Plan, error) {
	p, err := gpulet.Run(ctx, algo, in, opts)
	if err != nil {
		return nil, fmt.Errorf("plan with %s: %w", algo, err)
	}
	return p, nil
}
