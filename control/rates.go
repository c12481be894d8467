package control

import (
	"time"

	"github.com/gpulet/gpuletd/gpulet"
)

// Planned rates: the planner is given max(estimate, MinPlanRate) × (1 +
// Headroom) per model.
const (
	// MinPlanRate is the rate a model with no traffic yet is planned for,
	// req/s, so that every model has a gpu-let before its first request.
	MinPlanRate = 1.0
	// Headroom is the extra share of rate planned over the estimate, so
	// that a model's rate may grow a little before the next period.
	Headroom = 0.2
)

// PlanRate is the rate to plan a model for from its estimate, with the
// given headroom (Headroom in the daemon; the simulator can vary it).
func PlanRate(estimate, headroom float64) float64 {
	return max(estimate, MinPlanRate) * (1 + headroom)
}

// Short is the node's rates over its last SurgeCheck window.
type Short struct {
	// Rates is each model's rate over the window, requests/s.
	Rates map[string]float64
	// Early names the models whose requests began too late in the window
	// to judge a surge on (Count.Close); a re-plan plans for their rates
	// all the same.
	Early map[string]bool
}

// SurgeInput is what a surge check decides on.
type SurgeInput struct {
	// Now is the check's time, LastPlan when the node last re-planned.
	Now, LastPlan time.Duration
	// Plan is the plan in force, made with Headroom (Plan).
	Plan     *gpulet.Plan
	Headroom float64
	// Short is the rates over the window the check closed.
	Short Short
	// Estimates are the models' estimates now (Estimate.Now), which a
	// re-plan plans for where the short rate is lower; Folded those of the
	// models whose periods have been folded in (Estimate.Folded, none
	// before a model's first period ends), which a surge is judged against.
	Estimates, Folded map[string]float64
}

// SurgeReplan decides a surge check: it returns why the node re-plans now
// and the rates to plan for, or "" when it does not. A node that has no
// plan yet, or re-planned less than MinReplanGap ago, waits. A surge is a
// short rate over SurgeBase.
func SurgeReplan(in SurgeInput) (string, map[string]float64) {
	if in.Plan == nil || in.Now-in.LastPlan < MinReplanGap {
		return "", nil
	}
	why := Surge(in.Short.Rates, SurgeBase(in.Plan, in.Folded, in.Headroom), in.Short.Early)
	if why == "" {
		return "", nil
	}
	return why, MaxRates(in.Estimates, in.Short.Rates)
}

// SurgeBase is per model the rate a surge is judged against: the larger of
// the rate the plan was made for (PlannedFor: a model the plan holds back
// at overload is not a new surge while its demand stays where it was) and
// the model's folded estimate (what the periods measured, not the running
// one) with the headroom (PlanRate). Near its capacity the node is planned
// with less headroom than asked, down to none (Plan), and what it assigns
// is then about the estimate itself: a steady second then exceeds it by
// SurgeZ deviations (and by SurgeFactor) once in 88 at 27 req/s and once in
// 126 at 54, so that short-skew's four models at 0.9 of its max (54, 54, 27
// and 27 req/s at 1/20 speed) read as a surge about every half minute, and
// each re-plan for one noisy second moved models between GPUs while they
// served. A re-plan finds no room the plan could not: a rise within the
// headroom asked for waits for the period.
//
// An idle node's plan (gpulet.Plan.Spread) was made for no load: its rates
// are each model's share of the node, found as the largest that fits, so
// the gpu-lets run at their limit there. A load is a surge against it once
// it would need more than its share with the headroom: its base is the
// share over (1 + headroom) and SurgeFactor. Judged against the share
// itself, a single model driven to 96–99% of it (lenet5 in the admin
// page's test, 2 389 req/s of 2 417) failed 43% of its requests and never
// surged.
func SurgeBase(plan *gpulet.Plan, folded map[string]float64, headroom float64) map[string]float64 {
	out := PlannedFor(plan)
	if plan.Spread {
		for name, share := range out {
			out[name] = share / ((1 + headroom) * SurgeFactor)
		}
	}
	for name, est := range folded {
		out[name] = max(out[name], PlanRate(est, headroom))
	}
	return out
}

// PlannedFor is the rate a plan was made for, per model: what it assigns
// plus what it leaves unscheduled.
func PlannedFor(plan *gpulet.Plan) map[string]float64 {
	out := plan.Assigned()
	for name, r := range plan.Unscheduled {
		out[name] += r
	}
	return out
}

// Window is a measuring window every model of a node shares, the period's or
// the short one's: it opens where the last one closed (the zero value at
// time 0), never at a model's first request, so that one request just
// before a close cannot read as a burst. Times are on the caller's clock.
type Window struct{ opened time.Duration }

// OpenWindow opens the first window at start.
func OpenWindow(start time.Duration) Window { return Window{opened: start} }

// Since is how long the window has been open at now, seconds (0 when now
// is not after its opening).
func (w Window) Since(now time.Duration) float64 {
	return max((now - w.opened).Seconds(), 0)
}

// Close closes the window at now and opens the next one there: it returns
// the closed window's length in seconds, or 0, leaving the window open,
// when now is not after it opened.
func (w *Window) Close(now time.Duration) float64 {
	dt := (now - w.opened).Seconds()
	if dt <= 0 {
		return 0
	}
	w.opened = now
	return dt
}
