package arrival

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Poisson is a Poisson process: independent, exponentially distributed gaps.
type Poisson struct {
	rate float64
	rng  *rand.Rand
}

// NewPoisson returns a Poisson process of the given rate (arrivals per
// second) drawing from seed.
func NewPoisson(rate float64, seed uint64) (*Poisson, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("%w: %v requests/s; give a positive rate", ErrBadRate, rate)
	}
	return &Poisson{rate: rate, rng: newRand(seed)}, nil
}

// Next returns an exponential gap of mean 1/rate.
func (p *Poisson) Next() time.Duration { return seconds(p.rng.ExpFloat64() / p.rate) }

// Rate is the mean rate.
func (p *Poisson) Rate() float64 { return p.rate }
