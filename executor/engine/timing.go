package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// DefaultJitterCV is the emulated engine's default jitter: batch times vary
// with a coefficient of variation of 2%.
const DefaultJitterCV = 0.02

// LatencyFunc gives ℓ(b), the time a batch of b rows takes on the gpu-let
// (the executor passes its profile's curve).
type LatencyFunc func(batch int) time.Duration

// Timing is how long the emulated engine takes for a batch: Latency(rows)
// × Contention × a lognormal jitter factor of mean 1.
type Timing struct {
	// Latency is ℓ(b); required by the emulated engine.
	Latency LatencyFunc
	// Contention multiplies ℓ(b), e.g. the plan's interference factor;
	// 0 means 1.
	Contention float64
	// Jitter varies each batch's time.
	Jitter Jitter
}

// Jitter is a lognormal factor with mean 1, drawn per batch from a seeded
// generator so runs repeat.
type Jitter struct {
	// Disabled turns jitter off: every batch takes exactly
	// Latency × Contention.
	Disabled bool
	// CV is the factor's coefficient of variation; 0: DefaultJitterCV.
	CV float64
	// Seed seeds the generator.
	Seed uint64
}

// jitter draws factors; safe for concurrent use.
type jitter struct {
	off   bool
	mu    sync.Mutex
	rng   *rand.Rand
	mean  float64 // of the underlying normal
	sigma float64
}

func newJitter(j Jitter) (*jitter, error) {
	if j.Disabled {
		return &jitter{off: true}, nil
	}
	cv := j.CV
	if cv == 0 {
		cv = DefaultJitterCV
	}
	if cv < 0 || math.IsNaN(cv) || math.IsInf(cv, 0) {
		return nil, fmt.Errorf("%w: jitter coefficient of variation %v", ErrInvalidSpec, j.CV)
	}
	// A lognormal exp(N(μ, σ²)) has mean exp(μ+σ²/2) and CV² = exp(σ²)−1:
	// σ² = ln(1+CV²) and μ = −σ²/2 give mean 1 and the CV asked for.
	s2 := math.Log1p(cv * cv)
	return &jitter{
		rng:   rand.New(rand.NewPCG(j.Seed, j.Seed^0x9e3779b97f4a7c15)),
		mean:  -s2 / 2,
		sigma: math.Sqrt(s2),
	}, nil
}

func (j *jitter) factor() float64 {
	if j.off {
		return 1
	}
	j.mu.Lock()
	z := j.rng.NormFloat64()
	j.mu.Unlock()
	return math.Exp(j.mean + j.sigma*z)
}
