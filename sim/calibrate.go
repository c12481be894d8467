package sim

import (
	"math"
	"time"
)

// calibration follows an executor's rule for ℓ(b) (executor/models.go): the
// executor multiplies its profile's ℓ(b) by a factor that jumps to the
// largest measured/planned ratio of recent batches and decays back towards
// 1 with a half-life of 5 s, and gives the scheduler a new ℓ only when the
// factor moves by more than 5%. A batch slower than planned (jitter,
// interference the plan did not predict) thus makes the next batches
// planned longer. The rule is the executor's; the simulator keeps its own
// copy because the executor's is internal to its process loop.
type calibration struct {
	factor float64
	seen   float64
	at     time.Duration
}

// The executor's calibration bounds (executor/models.go).
const (
	calibHalfLife = 5 * time.Second
	calibStep     = 0.05
	calibMin      = 1
	calibMax      = 20
)

func newCalibration() calibration { return calibration{factor: 1, seen: 1} }

// observe folds one batch's measured time in and returns the factor and
// whether it changed.
func (c *calibration) observe(now, measured, planned time.Duration) (float64, bool) {
	if dt := now - c.at; dt > 0 {
		c.seen = 1 + (c.seen-1)*math.Exp2(-float64(dt)/float64(calibHalfLife))
		c.at = now
	}
	if planned > 0 && measured > 0 {
		c.seen = max(c.seen, float64(measured)/float64(planned)*c.factor)
	}
	next := min(max(c.seen, calibMin), calibMax)
	if next > c.factor*(1+calibStep) || next < c.factor*(1-calibStep) {
		c.factor = next
		return next, true
	}
	return c.factor, false
}
