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

// SurgeReplan decides a surge check at now: it returns why the node
// re-plans now and the rates to plan for, or "" when it does not. A node
// that has no plan yet, or re-planned less than MinReplanGap ago, waits.
// short are the rates over the last SurgeCheck, estimates the EWMAs, plan
// the plan in force. A surge is over the rate the plan was made for
// (PlannedFor): a model the plan holds back at overload is not a new surge
// while its demand stays where it was.
func SurgeReplan(now, lastPlan time.Duration, plan *gpulet.Plan, short, estimates map[string]float64) (string, map[string]float64) {
	if plan == nil || now-lastPlan < MinReplanGap {
		return "", nil
	}
	why := Surge(short, PlannedFor(plan))
	if why == "" {
		return "", nil
	}
	return why, MaxRates(estimates, short)
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
