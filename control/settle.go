package control

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// SettleSpan is how long a load that began inside the running period must
// have been measured before a plan made from its first seconds is checked
// against it (Settle).
//
// A load's first surge is planned from about a second of it: at a few dozen
// requests per second that count lies 14% either way one time in three.
// Near the node's capacity the headroom is bisected down for every model
// alike, so a model planned for a low second keeps a gpu-let with no room
// until the period re-plans: on emulated V100s at 1/20 speed, short-skew at
// 0.9 of its max, alexnet's first surge plan (a 20% gpu-let for 50–55 req/s
// of the 53.7 sent) failed 2–5 of its requests a second, 1.5–1.7% of all it
// was sent in a minute, for the 15–20 s until the period came
// (docs/BENCHMARKS.md, "Where a mix's misses fall"). Five seconds of the
// load hold five times the requests, a count √5 times as certain.
const SettleSpan = 5 * time.Second

// Settle returns why the node re-plans for a load that has just begun, ""
// when it does not: the first model, by name, whose load began inside the
// running period (in.Onsets, Count.Onset), has been measured for
// SettleSpan, was planned by the plan in force from less than that (the
// plan was made after its first request and before SettleSpan of it), and
// is assigned less than its rate since it began with half the headroom
// (PlanRate). It re-plans each such load at most once: the next plan is
// made after SettleSpan of it. A plan made before the load began (the
// simulator's start plan, made for the workload's rates) is not one made
// from its first seconds.
func Settle(in SurgeInput) string {
	names := make([]string, 0, len(in.Onsets))
	for name := range in.Onsets {
		names = append(names, name)
	}
	sort.Strings(names)
	assigned := in.Plan.Assigned()
	for _, name := range names {
		o := in.Onsets[name]
		span := time.Duration(o.Span * float64(time.Second))
		if span < SettleSpan {
			continue
		}
		began := in.Now - span
		if in.LastPlan <= began || in.LastPlan >= began+SettleSpan {
			continue
		}
		if a, ok := assigned[name]; ok && a < PlanRate(o.Rate, in.Headroom/2) {
			return fmt.Sprintf("rate of %s measured over %.0f s", name, math.Floor(o.Span))
		}
	}
	return ""
}

// settleRates are the rates a Settle re-plan plans for: the estimates,
// each load that just began at no less than its rate since it began.
func settleRates(in SurgeInput) map[string]float64 {
	out := make(map[string]float64, len(in.Estimates))
	for name, r := range in.Estimates {
		out[name] = r
	}
	for name, o := range in.Onsets {
		out[name] = max(out[name], o.Rate)
	}
	return out
}
