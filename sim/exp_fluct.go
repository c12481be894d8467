package sim

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/planbench"
	"github.com/gpulet/gpuletd/sim/workload"
)

// The fluctuation experiment (gpu-let paper §6.2, Figure 14): 1,800 s in
// which every model's rate rises and falls twice, the second wave higher,
// each model on its own schedule; the node re-plans every 20 s from the
// measured rates and new gpu-lets serve 10 s after they are planned (the
// workload defaults, the paper's period and reorganization time). Measured:
// goodput, the sum of the gpu-let sizes in use over time and the SLO
// violations per 20 s; the paper reports 0.14% of the requests violated
// (gpulet-evaluation.yaml rate_fluctuation_slo_violations). The node is
// iGniter's 4 V100s under MPS with its 4 models; the rates are fractions of
// R*, the largest total rate of the equal mix gpulet-int schedules
// (planbench.MaxScale), so the peak stays inside what the planner accepts.

// FluctDuration is the experiment's length.
const FluctDuration = 1800 * time.Second

// fluctStep is how often the rates change (phases).
const fluctStep = 10 * time.Second

// FluctPeak is the total rate at the second wave's top, as a share of R*.
const FluctPeak = 0.8

// fluctShape is model m's rate at t (seconds) as a share of its peak
// share: a floor of 0.3, a first wave to 0.7 over 0–600 s and a second to
// 1.0 over 900–1500 s, shifted by 40 s per model so that the models do not
// move in lockstep.
func fluctShape(m, models int, t float64) float64 {
	shift := (float64(m) - float64(models-1)/2) * 40
	bump := func(a, b float64) float64 {
		a, b = a+shift, b+shift
		if t <= a || t >= b {
			return 0
		}
		s := math.Sin(math.Pi * (t - a) / (b - a))
		return s * s
	}
	return 0.3 + 0.4*bump(0, 600) + 0.7*bump(900, 1500)
}

// FluctResult is the experiment's outcome for one executor setting.
type FluctResult struct {
	// Capped says whether batches on shared gpu-lets were capped at the
	// plan's (the default; Options.NoBatchCap turns it off).
	Capped bool    `json:"capped"`
	RStar  float64 `json:"r_star"`
	// Violations is the share of all requests that missed their SLO.
	Violations float64 `json:"violations"`
	Result     *Result `json:"result"`
}

// FluctWorkload builds the experiment's workload on a node of the set and
// returns it with R*.
func FluctWorkload(ctx context.Context, seed uint64) (*workload.Workload, float64, error) {
	node, err := planbench.LoadNode("igniter-v100", TemporalGPUs)
	if err != nil {
		return nil, 0, fmt.Errorf("fluctuation: %w", err)
	}
	mixes, err := node.Mixes()
	if err != nil {
		return nil, 0, fmt.Errorf("fluctuation: %w", err)
	}
	equal := mixes[0]
	scale, err := planbench.MaxScale(ctx, equal, node.GPUs, gpulet.AlgoGpuletInt, node.Options())
	if err != nil {
		return nil, 0, fmt.Errorf("fluctuation: %w", err)
	}
	rstar := scale * mixRate(equal)
	n := len(equal.Demands)
	peak := FluctPeak * rstar / float64(n)
	w := &workload.Workload{
		Devices:  []workload.Device{{Profiles: "igniter-v100", Count: TemporalGPUs}},
		Duration: workload.Duration(FluctDuration),
		Seed:     seed,
	}
	for m, d := range equal.Demands {
		w.Models = append(w.Models, workload.Model{Name: d.Name, Profile: d.Profile.Model, SLOMS: d.SLOMS, Rate: peak * fluctShape(m, n, 0)})
	}
	for t := fluctStep; t < FluctDuration; t += fluctStep {
		ph := workload.Phase{At: workload.Duration(t), Rates: map[string]float64{}}
		for m, d := range equal.Demands {
			ph.Rates[d.Name] = peak * fluctShape(m, n, t.Seconds())
		}
		w.Phases = append(w.Phases, ph)
	}
	return w, rstar, nil
}

// FluctReport is the experiment's outcome: the share of requests violated
// with the daemon's defaults (batches capped on shared gpu-lets), and each
// setting's run.
type FluctReport struct {
	ViolationFraction float64       `json:"violation_fraction"`
	Settings          []FluctResult `json:"settings"`
}

// RunFluctuation simulates the workload with executors as the daemon
// starts them (batches capped on shared gpu-lets) and, for comparison,
// uncapped.
func RunFluctuation(ctx context.Context, seed uint64) (*FluctReport, error) {
	w, rstar, err := FluctWorkload(ctx, seed)
	if err != nil {
		return nil, err
	}
	rep := &FluctReport{}
	for _, capped := range []bool{true, false} {
		res, err := Run(ctx, w, Options{NoBatchCap: !capped})
		if err != nil {
			return nil, fmt.Errorf("fluctuation: %w", err)
		}
		v := 0.0
		if res.Requests > 0 {
			v = float64(res.Violations()) / float64(res.Requests)
		}
		if capped {
			rep.ViolationFraction = v
		}
		rep.Settings = append(rep.Settings, FluctResult{Capped: capped, RStar: rstar, Violations: v, Result: res})
	}
	return rep, nil
}
