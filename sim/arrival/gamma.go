package arrival

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Gamma is a renewal process with Gamma-distributed gaps of shape k and mean
// 1/rate: the coefficient of variation of the gaps is 1/√k. Shape 1 is a
// Poisson process.
type Gamma struct {
	rate, shape float64
	scale       float64 // θ of the gap distribution, seconds: mean kθ = 1/rate
	d, c        float64 // Marsaglia–Tsang constants for max(k, k+1)
	rng         *rand.Rand
}

// NewGamma returns a Gamma process of the given rate (arrivals per second)
// and shape drawing from seed.
func NewGamma(rate, shape float64, seed uint64) (*Gamma, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("%w: %v requests/s; give a positive rate", ErrBadRate, rate)
	}
	if !(shape > 0) || math.IsInf(shape, 0) {
		return nil, fmt.Errorf("%w: gamma shape %v is not a positive number", ErrBadSpec, shape)
	}
	k := shape
	if k < 1 {
		k++ // draw Gamma(k+1) and multiply by U^(1/k), as Marsaglia and Tsang advise
	}
	d := k - 1.0/3
	return &Gamma{rate: rate, shape: shape, scale: 1 / (rate * shape), d: d, c: 1 / math.Sqrt(9*d), rng: newRand(seed)}, nil
}

// Next returns a Gamma(shape, 1/(rate·shape)) gap.
func (g *Gamma) Next() time.Duration {
	x := g.standard()
	if g.shape < 1 {
		x *= math.Pow(g.rng.Float64(), 1/g.shape)
	}
	return seconds(x * g.scale)
}

// standard draws Gamma(max(k, k+1), 1) by Marsaglia and Tsang's squeeze
// method ("A simple method for generating gamma variables", 2000).
func (g *Gamma) standard() float64 {
	for {
		x := g.rng.NormFloat64()
		v := 1 + g.c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := g.rng.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < 0.5*x2+g.d*(1-v+math.Log(v)) {
			return g.d * v
		}
	}
}

// Rate is the mean rate.
func (g *Gamma) Rate() float64 { return g.rate }

// Shape is the shape k of the gap distribution.
func (g *Gamma) Shape() float64 { return g.shape }
