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
	// DefaultBenchLoad is the offered load as a fraction of the capacity
	// (see BenchCapacity): just under it.
	DefaultBenchLoad = 0.95
	// capacityLoss is the loss that defines capacity, and capacityRuns the
	// requests per trial run when searching for it.
	capacityLoss = 0.01
	capacityRuns = 20000
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
	// Load is the offered rate as a fraction of BenchCapacity; 0 means
	// DefaultBenchLoad.
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
// under the capacity (DefaultBenchLoad of BenchCapacity), in virtual time; it
// reports the wall-clock speed of the scheduling core with its driver loop.
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
	capacity, err := BenchCapacity(cfg.Models, cfg.Seed)
	if err != nil {
		return nil, nil, 0, err
	}
	rate = load * capacity
	sim, src, err = benchWorkload(cfg.Models, cfg.Requests, cfg.Seed, cfg.Policy, rate)
	return sim, src, rate, err
}

// benchWorkload builds one gpu-let with the benchmark's models and a Poisson
// source at the given total rate.
func benchWorkload(models, requests int, seed uint64, p Policy, rate float64) (*Sim, Source, error) {
	lat, slos, err := benchModels(models)
	if err != nil {
		return nil, nil, err
	}
	specs := make([]ModelSpec, models)
	streams := make([]Stream, models)
	for i := range specs {
		specs[i] = ModelSpec{ID: ModelID(i), ModelConfig: ModelConfig{Latency: lat}}
		streams[i] = Stream{Model: ModelID(i), Rate: rate / float64(models), SLO: slos[i]}
	}
	ps, err := NewPoissonSource(streams, uint64(requests), seed)
	if err != nil {
		return nil, nil, fmt.Errorf("set up benchmark: %w", err)
	}
	sim, err := NewSim([]ExecutorSpec{{Config: Config{Policy: p}, Models: specs}}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("set up benchmark: %w", err)
	}
	return sim, ps, nil
}

// benchModels returns the benchmark's latency profile and the models' SLOs.
func benchModels(models int) (Latency, []time.Duration, error) {
	lat, err := LinearLatency(benchAlpha, benchBeta, benchMaxBatch)
	if err != nil {
		return Latency{}, nil, fmt.Errorf("set up benchmark: %w", err)
	}
	slos := make([]time.Duration, models)
	for i := range slos {
		slos[i] = benchSLOMin
		if models > 1 {
			slos[i] += (benchSLOMax - benchSLOMin) * time.Duration(i) / time.Duration(models-1)
		}
	}
	return lat, slos, nil
}

// BenchCapacity is the capacity the benchmark loads are relative to: the
// largest total rate (requests per second, even over the models) at which
// the eager policy rejects at most 1% of requests on the benchmark's gpu-let,
// found by bisection over runs of 20000 requests with the given seed,
// starting from estimateCapacity. Eager is the yardstick because it never
// idles with work queued, so what it loses is what the gpu-let cannot carry.
func BenchCapacity(models int, seed uint64) (float64, error) {
	if models < 1 || models > MaxModels {
		return 0, fmt.Errorf("find benchmark capacity: %w: models %d", ErrBadConfig, models)
	}
	lat, slos, err := benchModels(models)
	if err != nil {
		return 0, err
	}
	loses := func(rate float64) (bool, error) {
		sim, src, err := benchWorkload(models, capacityRuns, seed, Eager{}, rate)
		if err != nil {
			return false, err
		}
		st, err := sim.Run(src)
		if err != nil {
			return false, fmt.Errorf("find benchmark capacity: %w", err)
		}
		return float64(st.Rejections()) > capacityLoss*float64(st.Requests), nil
	}
	return bisectCapacity(2*estimateCapacity(lat, slos), loses)
}

// bisectCapacity returns the largest rate at which loses is false, to the
// precision of 12 bisection steps: from start it doubles until loses (at most
// 20 times), then bisects.
func bisectCapacity(start float64, loses func(rate float64) (bool, error)) (float64, error) {
	lo, hi := 0.0, start
	for range 20 { // make sure hi is past capacity
		bad, err := loses(hi)
		if err != nil {
			return 0, err
		}
		if bad {
			break
		}
		lo, hi = hi, 2*hi
	}
	for range 12 {
		mid := (lo + hi) / 2
		bad, err := loses(mid)
		if err != nil {
			return 0, err
		}
		if bad {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, nil
}

// estimateCapacity estimates the total rate (requests per second, split
// evenly over the models, one per SLO) that saturates one gpu-let where every
// model has latency lat. Model m at rate r runs batches of
//
//	b = the largest b ≤ b_max with b ≤ max(1, r·(SLO − ℓ(b))),
//
// b_max the largest batch with 2·ℓ(b) ≤ SLO (the papers' budget rule, DESIGN
// §4): the requests that arrive while the batch waits for its frontrun, no
// more than the SLO allows. The gpu-let is saturated when Σ r·ℓ(b)/b = 1. It
// is an optimistic analytic estimate (Poisson arrivals rarely fill batches
// that well) that BenchCapacity starts its search from.
func estimateCapacity(lat Latency, slos []time.Duration) float64 {
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
