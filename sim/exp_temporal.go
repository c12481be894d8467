package sim

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/planbench"
	"github.com/gpulet/gpuletd/sim/workload"
)

// The gpulet-vs-temporal experiment (gpu-let paper §6.2, Figure 12): the
// largest rate each system serves with fewer than 1% SLO violations on the
// paper's scenario shapes (Table 5's equal, long-only and short-skew, the
// game and traffic applications), adapted to iGniter's V100 models
// (planbench.Mixes), on TemporalGPUs V100s under MPS whose co-locations
// slow each other down as iGniter measured. Systems: elastic partitioning
// with the interference model (gpulet-int) and without (gpulet), against
// Nexus's squishy bin packing on whole GPUs (sbp), all served by the same
// executors (deferred policy), and sbp with eager executors. The paper's
// gpulet+int serves 102.6% more than SBP on average
// (gpulet-evaluation.yaml headline.throughput_gain_vs_sbp).

// TemporalGPUs is the node size (the paper's server has 4 GPUs).
const TemporalGPUs = 4

// TemporalSystem is a planner and executor policy.
type TemporalSystem struct {
	Name   string
	Algo   string
	Policy string
}

// TemporalSystems are compared in this order: gpuletd's first, then
// elastic partitioning without the interference model, whole-GPU squishy
// bin packing with deferred executors and, the baseline an operator of
// Triton gets, with eager ones.
var TemporalSystems = []TemporalSystem{
	{Name: "gpulet-int", Algo: "gpulet-int", Policy: "deferred"},
	{Name: "gpulet", Algo: "gpulet", Policy: "deferred"},
	{Name: "sbp", Algo: "sbp", Policy: "deferred"},
	{Name: "sbp-eager", Algo: "sbp", Policy: "eager"},
}

// TemporalPlanners are the planners whose max planned rate each row
// reports: every system's (the top of its search) and ideal, the
// exhaustive search, the ceiling.
var TemporalPlanners = []string{"gpulet-int", "gpulet", "sbp", "ideal"}

// temporalDuration is each probe's offered time.
const temporalDuration = 20 * time.Second

// TemporalOptions configure the experiment.
type TemporalOptions struct {
	// Set is the reference set of the GPUs and models (default igniter-v100).
	Set string
	// Seed is the first seed; Seeds how many (default DefaultSeeds).
	Seed  uint64
	Seeds int
	// NoBatchCap runs executors without the plan's batch caps on shared
	// gpu-lets (Options.NoBatchCap), to see what the caps change.
	NoBatchCap bool
	// Mixes and Systems, when set, run only the mixes and systems of those
	// names (the planners' max rates are reported for every planner).
	Mixes, Systems []string
}

// TemporalResult is the experiment's outcome.
type TemporalResult struct {
	Set      string        `json:"set"`
	Seeds    []uint64      `json:"seeds"`
	BatchCap bool          `json:"batch_cap"`
	Rows     []TemporalRow `json:"rows"`
}

// TemporalRow is one mix: what each planner plans at most, the shape of
// its plan there, and what each system serves (median over seeds).
type TemporalRow struct {
	Mix string `json:"mix"`
	// Planned is each planner's max planned rate, req/s.
	Planned map[string]float64 `json:"planned"`
	// Shape is each planner's plan at that rate: which models on which
	// gpu-let sizes.
	Shape map[string]string `json:"shape"`
	// LowerBounds are the planners some of whose plans ran past the node's
	// plan limit (planbench.MaxScaleWithin): their Planned is a lower bound.
	LowerBounds []string `json:"lower_bounds,omitempty"`
	// Served is each system's largest rate served with < 1% misses, req/s,
	// the median over seeds; Spread has every seed's.
	Served map[string]float64 `json:"served"`
	Spread map[string]Spread  `json:"spread"`
}

// temporalWorkload is a mix at a scale of its Table 5 rates.
func temporalWorkload(set string, x planbench.Mix, scale float64, seed uint64) *workload.Workload {
	zero := workload.Duration(0)
	w := &workload.Workload{
		Devices:    []workload.Device{{Profiles: set, Count: TemporalGPUs}},
		Duration:   workload.Duration(temporalDuration),
		Seed:       seed,
		Reorganize: &zero,
	}
	for _, d := range x.Demands {
		w.Models = append(w.Models, workload.Model{Name: d.Name, Profile: d.Profile.Model, SLOMS: d.SLOMS, Rate: d.Share * planbench.MixUnit * scale})
	}
	return w
}

// mixRate is a mix's total rate at scale 1.
func mixRate(x planbench.Mix) float64 {
	r := 0.0
	for _, d := range x.Demands {
		r += d.Share * planbench.MixUnit
	}
	return r
}

// RunGpuletVsTemporal measures every system on every mix: the planners'
// max planned rates, then for each system the largest rate up to its
// planner's max that the simulated node serves with fewer than 1% of the
// requests late or lost, over o.Seeds seeds.
func RunGpuletVsTemporal(ctx context.Context, o TemporalOptions) (*TemporalResult, error) {
	if o.Set == "" {
		o.Set = "igniter-v100"
	}
	if o.Seeds <= 0 {
		o.Seeds = DefaultSeeds
	}
	node, err := planbench.LoadNode(o.Set, TemporalGPUs)
	if err != nil {
		return nil, fmt.Errorf("gpulet vs temporal: %w", err)
	}
	mixes, err := node.Mixes()
	if err != nil {
		return nil, fmt.Errorf("gpulet vs temporal: %w", err)
	}
	if err := knownNames("mix", o.Mixes, mixNames(mixes)); err != nil {
		return nil, fmt.Errorf("gpulet vs temporal: %w", err)
	}
	if err := knownNames("system", o.Systems, systemNames()); err != nil {
		return nil, fmt.Errorf("gpulet vs temporal: %w", err)
	}
	res := &TemporalResult{Set: o.Set, BatchCap: !o.NoBatchCap, Seeds: SeedList(o.Seed, o.Seeds)}
	for _, x := range mixes {
		if len(o.Mixes) > 0 && !slices.Contains(o.Mixes, x.Name) {
			continue
		}
		row := TemporalRow{Mix: x.Name, Planned: map[string]float64{}, Shape: map[string]string{},
			Served: map[string]float64{}, Spread: map[string]Spread{}}
		total := mixRate(x)
		for _, algo := range TemporalPlanners {
			scale, bound, err := planbench.MaxScaleWithin(ctx, x, node.GPUs, gpulet.Algo(algo), node.Options(), node.PlanLimit)
			if err != nil {
				return nil, fmt.Errorf("gpulet vs temporal %s %s: %w", x.Name, algo, err)
			}
			if bound {
				row.LowerBounds = append(row.LowerBounds, algo)
			}
			row.Planned[algo] = scale * total
			p, err := gpulet.Run(ctx, gpulet.Algo(algo), x.Input(node.GPUs, scale), node.Options())
			if err != nil {
				return nil, fmt.Errorf("gpulet vs temporal %s %s: %w", x.Name, algo, err)
			}
			row.Shape[algo] = p.Shape()
		}
		build := func(rate float64, seed uint64) (*workload.Workload, error) {
			return temporalWorkload(o.Set, x, rate/total, seed), nil
		}
		for _, sys := range TemporalSystems {
			if len(o.Systems) > 0 && !slices.Contains(o.Systems, sys.Name) {
				continue
			}
			top := row.Planned[sys.Algo]
			if top <= 0 {
				continue
			}
			sp, err := ServedOverSeeds(ctx, build, Options{Algo: sys.Algo, Policy: sys.Policy, NoBatchCap: o.NoBatchCap}, top, res.Seeds)
			if err != nil {
				return nil, fmt.Errorf("gpulet vs temporal %s %s: %w", x.Name, sys.Name, err)
			}
			row.Served[sys.Name], row.Spread[sys.Name] = sp.Median, sp
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

func mixNames(xs []planbench.Mix) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.Name
	}
	return out
}

func systemNames() []string {
	out := make([]string, len(TemporalSystems))
	for i, s := range TemporalSystems {
		out[i] = s.Name
	}
	return out
}

// knownNames checks that every name asked for is one of known.
func knownNames(what string, asked, known []string) error {
	for _, a := range asked {
		if !slices.Contains(known, a) {
			return fmt.Errorf("%w: unknown %s %q (known: %s)", ErrBadOptions, what, a, strings.Join(known, ", "))
		}
	}
	return nil
}
