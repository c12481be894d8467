package control

import (
	"slices"

	"github.com/gpulet/gpuletd/gpulet"
)

// ShrinkBelow is how far under what a plan assigns a model its rate
// planned now may fall before a period re-plans for it (KeepPlan). In the
// fluctuation experiment (`gpuletd bench fluctuation`, with KeepPlan
// checking the estimates alone) two thirds violated as few requests as a
// half (0.045%) and gave GPUs back sooner (mean gpu-let sizes in use 281%
// against 296%; 272% re-planning at every period); three quarters
// re-planned more and violated more (0.121%).
const ShrinkBelow = 2.0 / 3

// KeepPlan says that a period's re-plan may leave the plan in force as it
// is: it still places every model's rate, each within what it assigns the
// model (the headroom spent in part, not more), and leaves nothing unplaced
// but what no gpu-let can take. A model's rate is the larger of its
// estimate and the period's own rate (period): after a rise the EWMA
// climbs for a few periods, and a plan made on the way up, checked against
// the estimates alone, stayed below the load (the equal mix's alexnet,
// assigned 31 req/s against 31.7 offered, answered 97.3% within its SLO). The planner run for estimates a
// little apart from the last ones may well lay the same load out otherwise
// (on four alike GPUs, each model on another one than before), and every
// such move loads a model somewhere and unloads it elsewhere while it
// serves: a steady mix on emulated V100s moved its models between GPUs at
// every period. A model that grows past its place re-plans at the period
// (and sooner, by Surge); one that shrinks keeps its place, which only its
// own requests use, until what it would be made for now falls below
// ShrinkBelow of what the plan assigns it (its rate planned with the headroom):
// then the period re-plans, so that a node whose load fell gives back the
// GPUs it no longer needs.
//
// A plan of an overloaded node (a fair share, with demand left unplaced)
// is never kept, so that the shares follow the demand. A model the plan
// does not know (loaded since) has nothing assigned, and is not kept.
//
// With spreadIdle (Plan, rather than PlanPacked), an idle node (no model's
// rate reaches MinPlanRate) keeps only the plan Plan makes for one
// (gpulet.Plan.Spread), so that a node whose load stopped spreads its
// models again, and a spread plan is kept, not shrunk, while every model's
// rate with the headroom fits its share: its room is what lets a load that
// begins be served from its first request, and a share is the most its
// gpu-lets take (SurgeBase). Without spreadIdle, a spread plan is not kept.
func KeepPlan(plan *gpulet.Plan, estimates, period map[string]float64, spreadIdle bool) bool {
	if plan == nil || plan.Spread && !spreadIdle {
		return false
	}
	for name, r := range plan.Unscheduled {
		if r > 0 && !slices.Contains(plan.Unplaceable, name) {
			return false
		}
	}
	rates := MaxRates(estimates, period)
	if spreadIdle && idleRates(rates) {
		return plan.Spread
	}
	assigned := plan.Assigned()
	for name, est := range rates {
		if slices.Contains(plan.Unplaceable, name) {
			continue
		}
		a := assigned[name]
		if plan.Spread {
			if PlanRate(est, Headroom) > a {
				return false
			}
			continue
		}
		if PlanRate(est, 0) > a || PlanRate(est, Headroom) < ShrinkBelow*a {
			return false
		}
	}
	return true
}

// idleRates says that rates has models and none reaches MinPlanRate (idle).
func idleRates(rates map[string]float64) bool {
	for _, r := range rates {
		if r >= MinPlanRate {
			return false
		}
	}
	return len(rates) > 0
}

// Settled says that what runs is plan: every gpu-let of it runs with all
// its models (none failed to start or load since), and nothing else runs.
func Settled[H comparable](running []Serving[H], plan *gpulet.Plan) bool {
	if plan == nil {
		return false
	}
	for _, c := range Changes(running, plan).Changes {
		if c.Action != gpulet.ActionKeep || len(c.Load) > 0 || len(c.Unload) > 0 {
			return false
		}
	}
	return true
}
