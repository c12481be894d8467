package sim

import (
	"context"
	"fmt"
	"time"

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

// TemporalSystems are compared in this order; the first is gpuletd's and
// the third the baseline of the ratio.
var TemporalSystems = []TemporalSystem{
	{Name: "gpulet-int+deferred", Algo: "gpulet-int", Policy: "deferred"},
	{Name: "gpulet+deferred", Algo: "gpulet", Policy: "deferred"},
	{Name: "sbp+deferred", Algo: "sbp", Policy: "deferred"},
	{Name: "sbp+eager", Algo: "sbp", Policy: "eager"},
}

// temporalDuration is each probe's offered time.
const temporalDuration = 20 * time.Second

// TemporalRow is one mix's goodputs, req/s, by system.
type TemporalRow struct {
	Mix string `json:"mix"`
	// Capped says whether batches on shared gpu-lets were capped at the
	// plan's (the default; Options.NoBatchCap turns it off).
	Capped  bool               `json:"capped"`
	Goodput map[string]float64 `json:"goodput"`
	// Ratio is gpulet-int+deferred over sbp+deferred.
	Ratio float64 `json:"ratio"`
}

// temporalWorkload is a mix at a scale of its Table 5 rates.
func temporalWorkload(x planbench.Mix, scale float64, seed uint64) *workload.Workload {
	zero := workload.Duration(0)
	w := &workload.Workload{
		Devices:    []workload.Device{{Profiles: "igniter-v100", Count: TemporalGPUs}},
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

// RunGpuletVsTemporal measures every system on every mix, with executors
// as the daemon starts them and with batches capped on shared gpu-lets.
func RunGpuletVsTemporal(ctx context.Context, seed uint64) ([]TemporalRow, error) {
	node, err := planbench.LoadNode("igniter-v100", TemporalGPUs)
	if err != nil {
		return nil, fmt.Errorf("gpulet vs temporal: %w", err)
	}
	mixes, err := node.Mixes()
	if err != nil {
		return nil, fmt.Errorf("gpulet vs temporal: %w", err)
	}
	var rows []TemporalRow
	for _, capped := range []bool{false, true} {
		for _, x := range mixes {
			row := TemporalRow{Mix: x.Name, Capped: capped, Goodput: map[string]float64{}}
			total := mixRate(x)
			// Start from what sbp schedules: the planner's own estimate.
			start, err := planbench.MaxScale(ctx, x, node.GPUs, "sbp", node.Options())
			if err != nil {
				return nil, fmt.Errorf("gpulet vs temporal %s: %w", x.Name, err)
			}
			build := func(rate float64) (*workload.Workload, error) {
				return temporalWorkload(x, rate/total, seed), nil
			}
			for _, sys := range TemporalSystems {
				s, err := MaxGoodput(ctx, build, Options{Algo: sys.Algo, Policy: sys.Policy, NoBatchCap: !capped}, max(start, 0.1)*total, 1-0.01)
				if err != nil {
					return nil, fmt.Errorf("gpulet vs temporal %s %s: %w", x.Name, sys.Name, err)
				}
				row.Goodput[sys.Name] = s.Goodput
			}
			if b := row.Goodput[TemporalSystems[2].Name]; b > 0 {
				row.Ratio = row.Goodput[TemporalSystems[0].Name] / b
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}
