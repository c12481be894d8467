package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/sim/workload"
)

// The deferred-vs-eager experiment (Symphony §3.4.2, Table 1, Figure 7):
// goodput of deferred over eager batch scheduling on Symphony's A100 model
// zoo (refset symphony-a100, Table 4), for subsets of strong, weak and mixed
// batching (β/α), bursty to smooth arrivals and SLOs scaled from the
// table's. Each subset's models are equally popular, and each model has a
// sub-cluster of DvEGPUsPerModel whole GPUs of its own (Symphony Table 1's
// GPUs:models ratio 2.0; plan Dedicated), so that the router and the
// executors' policy decide everything: the planner is not the subject here
// (see docs/BENCHMARKS.md for what it changes). Both policies get the same
// node, plan and arrivals.

// DvESubset names a subset of the zoo.
type DvESubset string

// The subsets.
const (
	// DvEStrong: the 8 models with the largest β/α (strong batching).
	DvEStrong DvESubset = "strong"
	// DvEMixed: 8 models evenly spread over the β/α ranking.
	DvEMixed DvESubset = "mixed"
	// DvEWeak: the 8 models with the smallest β/α (weak batching).
	DvEWeak DvESubset = "weak"
)

// DvESubsets lists the subsets in report order.
var DvESubsets = []DvESubset{DvEStrong, DvEMixed, DvEWeak}

// dveModels is the size of every subset.
const dveModels = 8

// DvEGPUsPerModel is the GPUs of each model's sub-cluster.
const DvEGPUsPerModel = 2

// DvEArrivals are the arrival processes: Poisson (Gamma shape 1), Gamma of
// shapes 0.5, 0.3 and 0.1 (Symphony Table 1's burstiness range) and the
// Azure LLM conversation trace (shared/data/azure), each model replaying
// it from its own starting point.
var DvEArrivals = []string{"poisson", "gamma:0.5", "gamma:0.3", "gamma:0.1", "azure"}

// DvESLOScales are the factors on the table's SLOs.
var DvESLOScales = []float64{1, 1.5, 2}

// AzureTrace is the Azure trace the experiments replay, relative to the
// shared data folder.
const AzureTrace = "azure/llm-inference-trace-conv.csv"

// ErrNoData is returned when the shared data folder cannot be found.
var ErrNoData = errors.New("shared data not found")

// FindData looks for the shared data folder (../shared/data from the
// repository root): from dir and every parent, the folder shared/data
// beside it. It returns the folder's path.
func FindData(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find shared data: %w", err)
	}
	for {
		for _, c := range []string{filepath.Join(d, "shared", "data"), filepath.Join(d, "..", "shared", "data")} {
			if st, err := os.Stat(filepath.Join(c, AzureTrace)); err == nil && !st.IsDir() {
				return filepath.Clean(c), nil
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("find shared data from %s: %w", dir, ErrNoData)
		}
		d = parent
	}
}

// DvEPoint is one configuration's goodputs, req/s.
type DvEPoint struct {
	Subset   DvESubset `json:"subset"`
	Arrival  string    `json:"arrival"`
	SLOScale float64   `json:"slo_scale"`
	// Timing is "jitter" (the emulated engine's default jitter) or "exact"
	// (every batch takes ℓ(b)).
	Timing string `json:"timing"`
	// Deferred and Eager are the goodputs, req/s, medians over the seeds;
	// the spreads have every seed's.
	Deferred       float64 `json:"deferred"`
	Eager          float64 `json:"eager"`
	DeferredSpread Spread  `json:"deferred_spread"`
	EagerSpread    Spread  `json:"eager_spread"`
	// Ratio is Deferred / Eager (0 when eager serves nothing).
	Ratio float64 `json:"ratio"`
}

// DvEResult is the experiment's outcome.
type DvEResult struct {
	// Seeds are the seeds every point ran with.
	Seeds []uint64 `json:"seeds"`
	// Models lists each subset's models.
	Models map[DvESubset][]string `json:"models"`
	Points []DvEPoint             `json:"points"`
}

// dveSubsets picks the subsets from the zoo: models ranked by β/α, leaving
// out those the planner cannot place even at the table's SLO (2·ℓ(1) >
// SLO: DenseNet121).
func dveSubsets(set *refset.Set) map[DvESubset][]*refset.Model {
	var ms []*refset.Model
	for _, m := range set.Models {
		if l := m.Linear; l.SLOMS > 0 && 2*(l.AlphaMS+l.BetaMS) <= l.SLOMS {
			ms = append(ms, m)
		}
	}
	ratio := func(m *refset.Model) float64 { return m.Linear.BetaMS / m.Linear.AlphaMS }
	slices.SortStableFunc(ms, func(a, b *refset.Model) int { return cmp.Compare(ratio(b), ratio(a)) })
	out := map[DvESubset][]*refset.Model{
		DvEStrong: slices.Clone(ms[:dveModels]),
		DvEWeak:   slices.Clone(ms[len(ms)-dveModels:]),
	}
	for i := range dveModels {
		out[DvEMixed] = append(out[DvEMixed], ms[i*(len(ms)-1)/(dveModels-1)])
	}
	return out
}

// dveDuration is each probe's offered time: 30 s, because a probe of
// Gamma(0.1) arrivals holds only a few dozen bursts per model and 10 s probes
// put the goodput anywhere in 250–470 req/s for one point (weak subset, 1.5x
// SLOs), for either policy; at 30 s it was 375–472, at 60 s 400–441.
const dveDuration = 30 * time.Second

// dveWorkload is one configuration at a total offered rate.
func dveWorkload(models []*refset.Model, arr string, sloScale, rate float64, seed uint64) *workload.Workload {
	zero := workload.Duration(0)
	w := &workload.Workload{
		Devices:    []workload.Device{{Profiles: "symphony-a100", Count: DvEGPUsPerModel * len(models)}},
		Duration:   workload.Duration(dveDuration),
		Seed:       seed,
		Reorganize: &zero,
	}
	for _, m := range models {
		w.Models = append(w.Models, workload.Model{Name: m.Name, Rate: rate / float64(len(models)), Arrival: arr, SLOMS: sloScale * m.Linear.SLOMS})
	}
	return w
}

// Timing is one way the emulated GPUs time batches.
type Timing struct {
	Name string
	Opts Options
}

// Timings are the two the experiments report: the emulated engine's jitter
// (lognormal, CV engine.DefaultJitterCV, the simulator's default) and exact
// batch times (every batch takes ℓ(b), as the papers' analyses assume).
var Timings = []Timing{{Name: "jitter", Opts: Options{}}, {Name: "exact", Opts: Options{JitterCV: -1}}}

// RunDeferredVsEager measures every configuration under every timing. data
// is the shared data folder (FindData); the Azure column needs it.
func RunDeferredVsEager(ctx context.Context, data string, seed uint64, seeds int) (*DvEResult, error) {
	set, err := refset.Load("symphony-a100")
	if err != nil {
		return nil, fmt.Errorf("deferred vs eager: %w", err)
	}
	subsets := dveSubsets(set)
	res := &DvEResult{Models: map[DvESubset][]string{}, Seeds: SeedList(seed, seeds)}
	for _, sub := range DvESubsets {
		for _, m := range subsets[sub] {
			res.Models[sub] = append(res.Models[sub], m.Name)
		}
	}
	for _, sub := range DvESubsets {
		models := subsets[sub]
		// A start for the search: what the GPUs carry with batches of 8.
		start := 0.0
		for _, m := range models {
			start += DvEGPUsPerModel * 8 / (8*m.Linear.AlphaMS + m.Linear.BetaMS) * 1000
		}
		for _, arr := range DvEArrivals {
			spec := arr
			if arr == "azure" {
				spec = "trace:" + filepath.Join(data, AzureTrace)
			}
			for _, k := range DvESLOScales {
				w := dveWorkload(models, spec, k, start, seed)
				plan, err := Dedicated(w, DvEGPUsPerModel)
				if err != nil {
					return nil, fmt.Errorf("deferred vs eager: %w", err)
				}
				for _, tm := range Timings {
					p := DvEPoint{Subset: sub, Arrival: arr, SLOScale: k, Timing: tm.Name}
					for _, pol := range []string{"deferred", "eager"} {
						o := tm.Opts
						o.Policy, o.Plan = pol, plan
						sp, err := OverSeeds(res.Seeds, func(sd uint64) (float64, error) {
							build := func(rate float64) (*workload.Workload, error) {
								return dveWorkload(models, spec, k, rate, sd), nil
							}
							s, err := MaxGoodput(ctx, build, o, start/2, GoodputTarget)
							return s.Goodput, err
						})
						if err != nil {
							return nil, fmt.Errorf("deferred vs eager %s %s %gx: %w", sub, arr, k, err)
						}
						if pol == "eager" {
							p.Eager, p.EagerSpread = sp.Median, sp
						} else {
							p.Deferred, p.DeferredSpread = sp.Median, sp
						}
					}
					if p.Eager > 0 {
						p.Ratio = p.Deferred / p.Eager
					}
					res.Points = append(res.Points, p)
				}
			}
		}
	}
	return res, nil
}
