// Package control holds the rules of the node's control loop that the daemon
// and the simulator share, so that both re-plan alike: folding a period's
// request count into a model's rate estimate (EWMA), and when a model's
// short-window rate is a surge that warrants re-planning before the period
// ends; the plan diff's reorganization steps, which it drives through a
// Node (Reorganize). It does no I/O: the callers count requests, keep time
// and run the executors.
package control

import (
	"math"
	"sort"
	"time"
)

// The surge rule: every SurgeCheck, a model whose rate over the last
// SurgeCheck is above SurgeMinRate and SurgeFactor times the rate the plan
// assigns it, by more than chance explains (SurgeZ), makes the node
// re-plan, at most once per MinReplanGap.
const (
	SurgeCheck   = time.Second
	SurgeFactor  = 1.25
	SurgeMinRate = 5.0
	MinReplanGap = 5 * time.Second
	// SurgeZ is how far, in standard deviations of a Poisson count, a
	// window's count must exceed what the plan's rate would bring in it.
	// A second of a steady load of a few dozen requests varies by a fifth
	// (at 27 req/s the standard deviation is 19%): on factor alone a
	// model at that rate read as a surge every few minutes, at 8 req/s
	// every 16 s, and each re-plan took the other models' rates from their
	// own noisy second, which read as the next surge (a steady mix on
	// emulated V100s at 27 to 54 req/s per model re-planned five times in
	// 30 s). At 2.5 deviations a steady load (its plan 1.2 times its rate)
	// reads as a surge in 0.2% of its seconds at 8 req/s and 0.03% at 27,
	// while one 40% above its plan still does in 40% of them, so that a
	// model planned short from a noisy second is re-planned within a few
	// seconds (at 3 deviations, 28%: the long-only mix's vgg19, planned at
	// 28 req/s of its 40, waited 13 s and lost 2% of its requests to the
	// late re-plan). At hundreds of requests a second the factor is the
	// stricter bound.
	SurgeZ = 2.5
)

// Estimate is one model's rate estimate across planning periods.
type Estimate struct {
	// Rate is the EWMA of the periods' rates, requests/s.
	Rate float64
	// Periods counts the periods folded in.
	Periods int
}

// Now is the rate to plan a model for between periods: its EWMA once a
// period has been folded in; until then what the running period's count
// (period, dt seconds after the period opened at now) has measured so far,
// once it can be judged (Count.Peek), else nothing. A re-plan before the
// first period ended (a surge, a model loaded) took a model's estimate as
// nothing and planned it for its last second's count alone, which at 40
// req/s lies within ±16% two times in three: a fresh daemon's first surge
// planned vgg19 for 25 req/s of the 39 sent.
func (e Estimate) Now(period *Count, now time.Duration, dt float64) float64 {
	if e.Periods > 0 {
		return e.Rate
	}
	if r, judged := period.Peek(now, dt); judged {
		return r
	}
	return e.Rate
}

// Folded is the EWMA of the periods folded in, and whether any was: what a
// surge is judged against (SurgeBase), not the running period's rate.
func (e Estimate) Folded() (float64, bool) { return e.Rate, e.Periods > 0 }

// Fold folds a period's rate into the estimate with weight w of the newest
// period; the first period is taken as it is.
func (e *Estimate) Fold(rate, w float64) float64 {
	if e.Periods == 0 {
		e.Rate = rate
	} else {
		e.Rate = w*rate + (1-w)*e.Rate
	}
	e.Periods++
	return e.Rate
}

// Surge returns why the node should re-plan early: the first model, by name,
// whose short-window rate (over SurgeCheck) is a surge over what the plan
// assigns it; "" when none is. A model in early, whose requests began too
// late in the window to judge (Count.Close), is judged at the next check.
func Surge(short, assigned map[string]float64, early map[string]bool) string {
	names := make([]string, 0, len(short))
	for name := range short {
		if !early[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	secs := SurgeCheck.Seconds()
	for _, name := range names {
		r, a := short[name], assigned[name]
		mean := a * secs // the window's count the plan's rate would bring
		if r > SurgeMinRate && r > SurgeFactor*a && r*secs > mean+SurgeZ*math.Sqrt(mean) {
			return "rate of " + name + " surged"
		}
	}
	return ""
}

// MaxRates is per model the larger of its two rates (a model in one map
// only has that one): on a surge the rates to re-plan for, the estimates
// and the short window's; at a period those KeepPlan checks, the estimates
// and the period's own.
func MaxRates(a, b map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(a))
	for name, r := range a {
		out[name] = r
	}
	for name, r := range b {
		out[name] = max(out[name], r)
	}
	return out
}
