package gpulet

import (
	"context"
	"fmt"
	"slices"
)

// DefaultInterferenceMargin is the margin callers plan with when they take
// the interference model from measured co-locations of the same device:
// planned slowdowns are 1.5 times the predicted excess over 1. On iGniter's
// 750 V100 pairs (1,500 samples) the fitted model's prediction, so
// widened, covers the measured slowdown in 93% of the samples (the margin
// each sample needs: median 0.004, 90% 0.44, 95% 0.54, 99% 0.95, worst
// 5.3); with it no gpulet-int plan of 3,000 random workloads broke the
// measured physics, against 1 without (docs/BENCHMARKS.md, "Planner").
const DefaultInterferenceMargin = 0.5

// Options tune the planners.
type Options struct {
	// Interference predicts co-location slowdowns for gpulet-int and ideal.
	// Without one, both plan as if gpu-lets never slowed each other down
	// (as gpulet does).
	Interference Predictor
	// InterferenceMargin widens every predicted slowdown: a factor f is
	// planned as 1 + (f−1)·(1+margin). 0 plans with the prediction as is.
	InterferenceMargin float64
	// SortByRateSLO orders elastic partitioning by rate × SLO (the authors'
	// code) instead of by rate (the paper's text, the default).
	SortByRateSLO bool
	// Rule is the latency check every gpu-let is held to; empty means
	// RuleServing.
	Rule Rule
	// WholeResidues keeps elastic partitioning to its first pass: no second
	// pass that splits residues off MPS GPUs where the first leaves rate
	// unplaced (elastic.go). control.Plan probes headroom with it, so that
	// room to grow never buys a layout whose gpu-lets change size with
	// every rate change.
	WholeResidues bool
}

// Run plans the input with the named planner. Bad demands never make it
// fail: they come back in Plan.Unscheduled with a reason. It fails only for
// an unusable input (ErrBadInput: no GPUs, a GPU described wrongly), an
// unknown planner (ErrUnknownAlgo) or, for ideal, when ctx ends first.
func Run(ctx context.Context, algo Algo, in Input, opts Options) (*Plan, error) {
	switch algo {
	case AlgoGpulet:
		opts.Interference = nil
	case AlgoGpuletInt, AlgoSBP, AlgoIdeal:
	default:
		return nil, fmt.Errorf("plan with %q: %w (known: gpulet, gpulet-int, sbp, ideal)", algo, ErrUnknownAlgo)
	}
	e, err := newEnv(in, opts)
	if err != nil {
		return nil, err
	}
	var s *state
	switch algo {
	case AlgoGpulet, AlgoGpuletInt:
		s = runElastic(e, opts.SortByRateSLO, false)
	case AlgoSBP:
		s = runSBP(e)
	case AlgoIdeal:
		if s, err = runIdeal(ctx, e); err != nil {
			return nil, err
		}
	}
	p := s.plan(algo)
	if (algo == AlgoGpulet || algo == AlgoGpuletInt) && len(p.Unscheduled) > 0 {
		if !opts.WholeResidues {
			p = splitResiduesIfMore(e, p, opts.SortByRateSLO)
		}
		return elasticOrWhole(e, p), nil
	}
	return p, nil
}

// splitResiduesIfMore is elastic partitioning's plan p, which leaves some
// rate unplaced, or the plan of a second pass that splits every model's
// last residue off an MPS GPU too (elastic.go) where that places more.
// It plans on e, the first pass's env, whose tables and predictions it
// reuses.
func splitResiduesIfMore(e *env, p *Plan, byRateSLO bool) *Plan {
	if !slices.ContainsFunc(e.gpus, func(g *gpuRT) bool { return g.mig == nil && g.max >= 2 && len(g.sizes) > 1 }) {
		return p // no MPS GPU a residue could be split off: the same plan
	}
	if r := runElastic(e, byRateSLO, true).plan(p.Algo); r.placesMoreThan(p) {
		return r
	}
	return p
}

// elasticOrWhole is elastic partitioning's plan p, which leaves some rate
// unplaced, or whole-GPU temporal sharing's (SBP) where that places more:
// whole GPUs are gpu-lets too (100%, nothing beside them to interfere),
// and elastic partitioning, greedy, sometimes misses a packing SBP finds (on
// the igniter-v100 game mix SBP plans 5% more, docs/BENCHMARKS.md). A node
// planned by gpulet-int thus never places less than one planned by sbp.
// It plans on e, elastic partitioning's env.
func elasticOrWhole(e *env, p *Plan) *Plan {
	if w := runSBP(e).plan(p.Algo); w.placesMoreThan(p) {
		return w
	}
	return p
}

// placesMoreThan says whether p leaves less rate unplaced than q, beyond
// rounding.
func (p *Plan) placesMoreThan(q *Plan) bool {
	return p.UnscheduledRate() < q.UnscheduledRate()*(1-relTol)
}
