package arrival

import (
	"fmt"
	"math"
	"time"
)

// Constant arrives at even gaps of 1/rate, as perf_analyzer's
// --request-distribution=constant (its default) sends.
type Constant struct {
	rate float64
	n    float64       // gaps handed out, so that rounding does not drift the rate
	sent time.Duration // their sum
}

// NewConstant returns arrivals evenly spaced at rate (arrivals per second).
func NewConstant(rate float64) (*Constant, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("%w: %v requests/s; give a positive rate", ErrBadRate, rate)
	}
	return &Constant{rate: rate}, nil
}

// Next returns the gap to the next arrival: 1/rate, rounded to the
// nanosecond so that n gaps add up to n/rate.
func (c *Constant) Next() time.Duration {
	c.n++
	next := seconds(c.n / c.rate)
	g := next - c.sent
	c.sent = next
	return g
}

// Rate is the rate.
func (c *Constant) Rate() float64 { return c.rate }
