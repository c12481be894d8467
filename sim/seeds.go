package sim

import (
	"context"
	"fmt"
	"slices"

	"github.com/gpulet/gpuletd/sim/workload"
)

// DefaultSeeds is how many seeds an experiment runs unless told: one seed's
// arrivals and jitter decide a single probe, so the reports give the median
// and range over several.
const DefaultSeeds = 5

// Spread is a measure over seeds: the median and the range.
type Spread struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Values []float64 `json:"values"`
}

// SpreadOf summarises values (one per seed).
func SpreadOf(values []float64) Spread {
	if len(values) == 0 {
		return Spread{}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Median: med, Min: s[0], Max: s[len(s)-1], Values: values}
}

// SeedBuild makes the workload of one experiment point for a seed.
type SeedBuild func(rate float64, seed uint64) (*workload.Workload, error)

// servedSteps is how many halvings ServedRate makes below the top: 1/256 of
// the top rate.
const servedSteps = 8

// ServedRate is the largest offered rate up to top (the planner's own max
// for the system) that the node serves with attainment ≥ GoodputTarget
// (fewer than 1% of the requests late or lost), found by bisection: top
// itself first, then halving the interval between the last rate that held
// and the first that did not. 0 when even top/256 fails.
func ServedRate(ctx context.Context, build Build, opts Options, top float64) (float64, []Probe, error) {
	if !(top > 0) {
		return 0, nil, fmt.Errorf("served rate: %w: top %v", ErrBadOptions, top)
	}
	var probes []Probe
	probe := func(rate float64) (bool, error) {
		p, err := probeAt(ctx, build, opts, rate)
		if err != nil {
			return false, err
		}
		probes = append(probes, p)
		return p.Attainment >= GoodputTarget, nil
	}
	ok, err := probe(top)
	if err != nil || ok {
		return top, probes, err
	}
	lo, hi := 0.0, top
	for range servedSteps {
		mid := (lo + hi) / 2
		ok, err := probe(mid)
		if err != nil {
			return lo, probes, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, probes, nil
}

// ServedOverSeeds is ServedRate for each seed.
func ServedOverSeeds(ctx context.Context, build SeedBuild, opts Options, top float64, seeds []uint64) (Spread, error) {
	return OverSeeds(seeds, func(seed uint64) (float64, error) {
		r, _, err := ServedRate(ctx, func(rate float64) (*workload.Workload, error) { return build(rate, seed) }, opts, top)
		return r, err
	})
}

// SeedList is the seeds seed, seed+1, … (n of them, at least one).
func SeedList(seed uint64, n int) []uint64 {
	out := make([]uint64, max(n, 1))
	for k := range out {
		out[k] = seed + uint64(k)
	}
	return out
}

// OverSeeds measures once per seed and summarises.
func OverSeeds(seeds []uint64, measure func(seed uint64) (float64, error)) (Spread, error) {
	vals := make([]float64, 0, len(seeds))
	for _, s := range seeds {
		v, err := measure(s)
		if err != nil {
			return Spread{}, err
		}
		vals = append(vals, v)
	}
	return SpreadOf(vals), nil
}
