package sim

import (
	"context"
	"fmt"
	"math"

	"github.com/gpulet/gpuletd/sim/workload"
)

// GoodputTarget is the SLO attainment that defines goodput in the
// experiments: Symphony's, the largest offered rate at which at least 99%
// of the requests finish within their SLO.
const GoodputTarget = 0.99

// The search's shape: upward steps of 25%, at most 40 of them, then 8
// bisection steps (to 0.1% of the rate).
const (
	searchGrowth = 1.25
	searchScan   = 40
	searchSteps  = 8
)

// Build makes the workload of one experiment point at a total offered rate.
type Build func(rate float64) (*workload.Workload, error)

// Probe is one simulated point of a search.
type Probe struct {
	Rate       float64 `json:"rate"`
	Attainment float64 `json:"attainment"`
	Goodput    float64 `json:"goodput"`
}

// Search is the outcome of MaxGoodput.
type Search struct {
	// Rate is the largest offered rate found with attainment ≥ the target,
	// req/s (0 when even the lowest probe missed it); Goodput the
	// requests/s within SLO measured there.
	Rate    float64 `json:"rate"`
	Goodput float64 `json:"goodput"`
	Probes  []Probe `json:"probes"`
}

// MaxGoodput finds the largest offered rate up to which the simulation
// meets the attainment target at every probe: from start/8 it raises the
// rate by 25% per probe until a probe misses the target (at most 40 probes;
// a plan can fail at a low rate and hold at a higher one, and such a
// failure counts, as in the gpu-let paper's search, §6.2: "gradually
// increasing the request rate until SLO violation happens"), then bisects
// between the last rate that held and the first that did not, 8 times.
// Every probe uses the same seed, so a point repeats exactly.
func MaxGoodput(ctx context.Context, build Build, opts Options, start, target float64) (Search, error) {
	if !(start > 0) || math.IsInf(start, 0) || !(target > 0 && target <= 1) {
		return Search{}, fmt.Errorf("search goodput: %w: start %v, target %v", ErrBadOptions, start, target)
	}
	var s Search
	probe := func(rate float64) (bool, error) {
		p, err := probeAt(ctx, build, opts, rate)
		if err != nil {
			return false, err
		}
		s.Probes = append(s.Probes, p)
		ok := p.Attainment >= target
		if ok && rate > s.Rate {
			s.Rate, s.Goodput = rate, p.Goodput
		}
		return ok, nil
	}
	lo, hi := 0.0, start/8
	for range searchScan {
		ok, err := probe(hi)
		if err != nil {
			return s, err
		}
		if !ok {
			break
		}
		lo, hi = hi, hi*searchGrowth
	}
	if lo == hi/searchGrowth && len(s.Probes) == searchScan {
		return s, nil // never missed: the last rate tried
	}
	for range searchSteps {
		mid := (lo + hi) / 2
		ok, err := probe(mid)
		if err != nil {
			return s, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return s, nil
}

// probeAt simulates the workload build makes at rate.
func probeAt(ctx context.Context, build Build, opts Options, rate float64) (Probe, error) {
	w, err := build(rate)
	if err != nil {
		return Probe{}, err
	}
	res, err := Run(ctx, w, opts)
	if err != nil {
		return Probe{}, err
	}
	return Probe{Rate: rate, Attainment: res.SLOAttainment, Goodput: res.Goodput}, nil
}
