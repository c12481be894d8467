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

// searchSteps bounds the bisection: 2^-10 of the bracket.
const searchSteps = 10

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

// MaxGoodput finds the largest offered rate in [0, hi] at which the
// simulation meets the attainment target, by doubling hi while it is met and
// then bisecting 10 times (the probes use the same seed, so a point
// repeats exactly).
func MaxGoodput(ctx context.Context, build Build, opts Options, hi, target float64) (Search, error) {
	if !(hi > 0) || math.IsInf(hi, 0) || !(target > 0 && target <= 1) {
		return Search{}, fmt.Errorf("search goodput: %w: start %v, target %v", ErrBadOptions, hi, target)
	}
	var s Search
	probe := func(rate float64) (bool, error) {
		w, err := build(rate)
		if err != nil {
			return false, err
		}
		res, err := Run(ctx, w, opts)
		if err != nil {
			return false, err
		}
		s.Probes = append(s.Probes, Probe{Rate: rate, Attainment: res.SLOAttainment, Goodput: res.Goodput})
		ok := res.SLOAttainment >= target
		if ok && rate > s.Rate {
			s.Rate, s.Goodput = rate, res.Goodput
		}
		return ok, nil
	}
	lo := 0.0
	for range 20 {
		ok, err := probe(hi)
		if err != nil {
			return s, err
		}
		if !ok {
			break
		}
		lo, hi = hi, 2*hi
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
