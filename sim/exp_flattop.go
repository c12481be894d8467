package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/gpulet/gpuletd/sim/workload"
)

// The flat-top experiment (Symphony §3.5 and §5.4, Figure 2): offered load
// from 0.2 to 2 times the capacity; goodput should stay flat beyond the
// capacity (goodput stability) and the GPUs' busy fraction should follow
// the load below it (load-proportional use). Symphony runs 10 ResNet models
// with a 100 ms SLO on 24 GPUs; here 10 models with ResNet50's A100 profile
// (refset symphony-a100, Table 4) and a 100 ms SLO on FlatTopGPUs whole
// A100s, equally popular, Poisson, planned by the real planner at each
// offered rate (as the daemon's planner would settle on it).

// FlatTopGPUs is the experiment's node size.
const FlatTopGPUs = 8

// flatTopModels is the number of models.
const flatTopModels = 10

// FlatTopLoads are the offered loads as fractions of the capacity.
var FlatTopLoads = []float64{0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0}

// FlatTopPolicies are compared at every load.
var FlatTopPolicies = []string{"deferred", "deferred:solo,headonly", "eager"}

// flatTopDuration is each point's offered time.
const flatTopDuration = 10 * time.Second

// FlatTopPoint is one policy at one load.
type FlatTopPoint struct {
	Policy  string  `json:"policy"`
	Load    float64 `json:"load"`
	Offered float64 `json:"offered"`
	Goodput float64 `json:"goodput"`
	// Attainment is the share of requests within SLO; Busy the GPUs' mean
	// busy fraction; GPUs the GPUs the plan uses.
	Attainment float64 `json:"attainment"`
	Busy       float64 `json:"busy"`
	GPUs       int     `json:"gpus"`
	MeanBatch  float64 `json:"mean_batch"`
}

// FlatTopResult is the experiment's outcome.
type FlatTopResult struct {
	// Capacity is the largest offered rate deferred serves with 99% within
	// SLO (MaxGoodput), the 1.0 of the loads.
	Capacity float64        `json:"capacity"`
	Points   []FlatTopPoint `json:"points"`
}

func flatTopWorkload(rate float64, seed uint64) *workload.Workload {
	zero := workload.Duration(0)
	w := &workload.Workload{
		Devices:    []workload.Device{{Profiles: "symphony-a100", Count: FlatTopGPUs}},
		Duration:   workload.Duration(flatTopDuration),
		Seed:       seed,
		Reorganize: &zero,
	}
	for i := range flatTopModels {
		w.Models = append(w.Models, workload.Model{Name: fmt.Sprintf("resnet50-%d", i+1), Profile: "resnet50", Rate: rate / flatTopModels, SLOMS: 100})
	}
	return w
}

// RunFlatTop measures the capacity, then every policy at every load.
func RunFlatTop(ctx context.Context, seed uint64) (*FlatTopResult, error) {
	build := func(rate float64) (*workload.Workload, error) { return flatTopWorkload(rate, seed), nil }
	// ResNet50 on an A100 carries about 2,300 req/s per GPU at batch 32.
	s, err := MaxGoodput(ctx, build, Options{Policy: "deferred"}, 1000*FlatTopGPUs, GoodputTarget)
	if err != nil {
		return nil, fmt.Errorf("flat-top capacity: %w", err)
	}
	res := &FlatTopResult{Capacity: s.Rate}
	for _, pol := range FlatTopPolicies {
		for _, load := range FlatTopLoads {
			r, err := Run(ctx, flatTopWorkload(load*s.Rate, seed), Options{Policy: pol})
			if err != nil {
				return nil, fmt.Errorf("flat-top %s at %g: %w", pol, load, err)
			}
			used := 0
			if len(r.Plans) > 0 {
				used = r.Plans[0].GPUs
			}
			res.Points = append(res.Points, FlatTopPoint{Policy: pol, Load: load, Offered: r.OfferedRate, Goodput: r.Goodput,
				Attainment: r.SLOAttainment, Busy: r.MeanBusy, GPUs: used, MeanBatch: r.MeanBatch})
		}
	}
	return res, nil
}
