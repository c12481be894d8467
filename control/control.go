// Package control holds the rules of the node's control loop that the daemon
// and the simulator share, so that both re-plan alike: folding a period's
// request count into a model's rate estimate (EWMA), and when a model's
// short-window rate is a surge that warrants re-planning before the period
// ends; the plan diff's reorganization steps, which it drives through a
// Node (Reorganize). It does no I/O: the callers count requests, keep time
// and run the executors.
package control

import (
	"sort"
	"time"
)

// The surge rule: every SurgeCheck, a model whose rate over the last
// SurgeCheck is above SurgeMinRate and SurgeFactor times the rate the plan
// assigns it makes the node re-plan, at most once per MinReplanGap.
const (
	SurgeCheck   = time.Second
	SurgeFactor  = 1.25
	SurgeMinRate = 5.0
	MinReplanGap = 5 * time.Second
)

// Estimate is one model's rate estimate across planning periods.
type Estimate struct {
	// Rate is the EWMA of the periods' rates, requests/s.
	Rate float64
	// Periods counts the periods folded in.
	Periods int
}

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
// whose short-window rate is a surge over what the plan assigns it; "" when
// none is.
func Surge(short, assigned map[string]float64) string {
	names := make([]string, 0, len(short))
	for name := range short {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if r := short[name]; r > SurgeMinRate && r > SurgeFactor*assigned[name] {
			return "rate of " + name + " surged"
		}
	}
	return ""
}

// SurgeRates are the rates to re-plan for on a surge: per model the larger
// of its estimate and its short-window rate.
func SurgeRates(estimates, short map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(estimates))
	for name, r := range estimates {
		out[name] = r
	}
	for name, r := range short {
		out[name] = max(out[name], r)
	}
	return out
}
