package sched

import (
	"fmt"
	"time"
)

// The benchmark workload's latency profile: ℓ(b) = α·b + β with α = 1 ms,
// β = 5 ms (the synthetic profile of Symphony §3.4.1, Figure 6a, at its
// middle β/α), batches up to 64, SLOs spread evenly over 25–100 ms (the range
// of Symphony's Table 4 SLOs for most models).
const (
	benchAlpha    = time.Millisecond
	benchBeta     = 5 * time.Millisecond
	benchMaxBatch = 64
	benchSLOMin   = 25 * time.Millisecond
	benchSLOMax   = 100 * time.Millisecond
	// DefaultBenchLoad is the offered load as a fraction of the estimated
	// capacity: just under it.
	DefaultBenchLoad = 0.9
)

// BenchConfig is one scheduling-core benchmark run.
type BenchConfig struct {
	// Models on the one gpu-let (≥ 1), with equal Poisson rates.
	Models int
	// Requests to feed (≥ 1).
	Requests int
	// Seed of the arrival process.
	Seed uint64
	// Policy; nil means Deferred.
	Policy Policy
	// Load is the offered rate as a fraction of the estimated capacity;
	// 0 means DefaultBenchLoad.
	Load float64
}

// BenchResult is what one benchmark run measured.
type BenchResult struct {
	Models   int
	Requests uint64
	Policy   string
	// OfferedRate is the arrival rate in virtual time, requests per second.
	OfferedRate float64
	// Elapsed is the wall time the simulation loop took, on one goroutine.
	Elapsed time.Duration
	// RequestsPerSecondPerCore is Requests / Elapsed: the core with its
	// virtual-time driver and the arrival generator, on one core.
	RequestsPerSecondPerCore float64
	// MeanBatch, Completed and Rejected describe the schedule produced.
	MeanBatch           float64
	Completed, Rejected uint64
}

// BenchCore runs the default benchmark: the deferred policy on one gpu-let
// with the given number of models, Poisson arrivals (fixed seed) offered just
// under the estimated capacity, in virtual time; it reports the wall-clock
// speed of the scheduling core with its driver loop.
func BenchCore(models, requests int, seed uint64) (BenchResult, error) {
	return RunBench(BenchConfig{Models: models, Requests: requests, Seed: seed})
}

// RunBench runs one benchmark.
func RunBench(cfg BenchConfig) (BenchResult, error) {
	sim, src, rate, err := NewBenchSim(cfg)
	if err != nil {
		return BenchResult{}, err
	}
	start := time.Now()
	st, err := sim.Run(src)
	elapsed := time.Since(start)
	if err != nil {
		return BenchResult{}, fmt.Errorf("run benchmark: %w", err)
	}
	res := BenchResult{
		Models:      cfg.Models,
		Requests:    st.Requests,
		Policy:      sim.Scheduler(0).Policy().String(),
		OfferedRate: rate,
		Elapsed:     elapsed,
		MeanBatch:   st.MeanBatch(),
		Completed:   st.Completed,
		Rejected:    st.Rejections(),
	}
	if elapsed > 0 {
		res.RequestsPerSecondPerCore = float64(st.Requests) / elapsed.Seconds()
	}
	return res, nil
}

// NewBenchSim builds the benchmark's simulation and arrival source without
// running it; rate is the offered rate in requests per second.
func NewBenchSim(cfg BenchConfig) (sim *Sim, src Source, rate float64, err error) {
	if cfg.Models < 1 || cfg.Models > MaxModels || cfg.Requests < 1 {
		return nil, nil, 0, fmt.Errorf("set up benchmark: %w: models %d, requests %d", ErrBadConfig, cfg.Models, cfg.Requests)
	}
	load := cfg.Load
	if load == 0 {
		load = DefaultBenchLoad
	}
	if !(load > 0) {
		return nil, nil, 0, fmt.Errorf("set up benchmark: %w: load %v", ErrBadConfig, cfg.Load)
	}
	lat, err := LinearLatency(benchAlpha, benchBeta, benchMaxBatch)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("set up benchmark: %w", err)
	}
	slos := make([]time.Duration, cfg.Models)
	models := make([]ModelSpec, cfg.Models)
	for i := range slos {
		slos[i] = benchSLOMin
		if cfg.Models > 1 {
			slos[i] += (benchSLOMax - benchSLOMin) * time.Duration(i) / time.Duration(cfg.Models-1)
		}
		models[i] = ModelSpec{ID: ModelID(i), ModelConfig: ModelConfig{Latency: lat}}
	}
	rate = load * EstimateCapacity(lat, slos)
	streams := make([]Stream, cfg.Models)
	for i := range streams {
		streams[i] = Stream{Model: ModelID(i), Rate: rate / float64(cfg.Models), SLO: slos[i]}
	}
	ps, err := NewPoissonSource(streams, uint64(cfg.Requests), cfg.Seed)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("set up benchmark: %w", err)
	}
	sim, err = NewSim([]ExecutorSpec{{Config: Config{Policy: cfg.Policy}, Models: models}}, nil)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("set up benchmark: %w", err)
	}
	return sim, ps, rate, nil
}

// EstimateCapacity estimates the total rate (requests per second, split
// evenly over the models, one per SLO) that saturates one gpu-let where every
// model has latency lat. Model m at rate r runs batches of
//
//	b = the largest b ≤ b_max with b ≤ max(1, r·(SLO − ℓ(b))),
//
// b_max the largest batch with 2·ℓ(b) ≤ SLO (the papers' budget rule, DESIGN
// §4): the requests that arrive while the batch waits for its frontrun, no
// more than the SLO allows. The gpu-let is saturated when Σ r·ℓ(b)/b = 1. It
// is a planning estimate, not a measurement: BenchResult reports the
// rejections that the offered load actually caused.
func EstimateCapacity(lat Latency, slos []time.Duration) float64 {
	if len(slos) == 0 || lat.MaxBatch() == 0 {
		return 0
	}
	util := func(total float64) float64 {
		r := total / float64(len(slos))
		u := 0.0
		for _, slo := range slos {
			b := 0
			for c := lat.MaxBatch(); c >= 1; c-- {
				l := lat.At(c)
				if 2*l > slo && c > 1 {
					continue
				}
				if c == 1 || float64(c) <= r*(slo-l).Seconds() {
					b = c
					break
				}
			}
			u += r * lat.At(b).Seconds() / float64(b)
		}
		return u
	}
	lo, hi := 0.0, 1.0
	for util(hi) < 1 && hi < 1e12 {
		hi *= 2
	}
	for range 60 {
		mid := (lo + hi) / 2
		if util(mid) < 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
