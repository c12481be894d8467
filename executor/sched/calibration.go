package sched

import (
	"slices"
	"time"
)

// Calibration follows how long a model's batches really take against its
// profiled ℓ(b) and gives the factor to scale ℓ(b) by (Latency.Scaled): a
// high quantile of measured/profiled over the last CalibrationWindow
// batches. A slower device (a loaded host, interference the plan did not
// predict, batch-time jitter) is followed within a few batches, so deferred
// batches, which start at the last moment, still end by their deadlines;
// one outlier batch (a scheduling hiccup) is not followed. The factor never
// goes below 1: a device faster than profiled only leaves some batching
// unused. When no batch has run for CalibrationForget it goes back to 1 (a
// factor that makes the scheduler refuse everything would never be
// corrected otherwise). The factor moves only by more than CalibrationStep,
// so the scheduler is not given a new ℓ after every batch.
//
// The factor never makes ℓ(1) longer than half the model's SLO (the ceiling,
// CalibrationCeiling): ℓ(1) beyond it refuses nearly every request, and a
// plan whose batches take that long no longer holds anyway — re-planning
// deals with that, not refusal. Seen on an H100: 8% of a 0.3 ms model's
// batches took 2-9 ms; the factor went to its cap of 20, ℓ(1) to 6 ms, above
// the 5 ms SLO, and 84% of a load the GPU could serve was refused as
// deadline_unreachable while the GPU was 31% busy.
//
// The executor process and the simulator both drive it, from their own
// clocks. The zero value is not ready; use NewCalibration.
type Calibration struct {
	factor  float64
	typical float64 // the window's median ratio, within [1, ceiling]
	ceiling float64
	ratios  [CalibrationWindow]float64
	sorted  []float64 // scratch for the quantile
	n       int       // ratios recorded (up to CalibrationWindow)
	next    int       // ring position
	last    time.Duration
}

// Calibration settings.
const (
	// CalibrationWindow is how many recent batches the quantile is over.
	CalibrationWindow = 64
	// CalibrationMinBatches is how many batches are seen before the
	// factor moves.
	CalibrationMinBatches = 8
	// CalibrationSkip is how many of the window's slowest batches the
	// factor ignores (outliers).
	CalibrationSkip = 1
	// CalibrationForget is the idle time after which the window is
	// forgotten.
	CalibrationForget = 2 * time.Second
	// CalibrationStep is the least relative change of the factor that is
	// passed on.
	CalibrationStep = 0.01
	// CalibrationMax caps the factor.
	CalibrationMax = 20
)

// NewCalibration returns a calibration at factor 1 whose factor never
// exceeds ceiling (see CalibrationCeiling; at least 1, at most
// CalibrationMax).
func NewCalibration(ceiling float64) Calibration {
	return Calibration{factor: 1, typical: 1, ceiling: min(max(ceiling, 1), CalibrationMax), sorted: make([]float64, 0, CalibrationWindow)}
}

// CalibrationCeiling is the largest factor for a model with the given SLO
// whose profiled ℓ(1) is l1: the factor that makes ℓ(1) half the SLO, within
// [1, CalibrationMax]. Without an SLO (0) it is CalibrationMax.
func CalibrationCeiling(slo, l1 time.Duration) float64 {
	if slo <= 0 || l1 <= 0 {
		return CalibrationMax
	}
	return min(max(float64(slo)/2/float64(l1), 1), CalibrationMax)
}

// apply scales a model's profiled ℓ(b): the ℓ(b) to plan batches with
// (Factor) and the ℓ(1) to refuse requests by (Typical), the arguments of
// Scheduler.SetLatencies.
func (c *Calibration) apply(base Latency) (Latency, time.Duration) {
	return base.Scaled(c.factor), max(time.Duration(float64(base.At(1))*c.Typical()), 1)
}

// SetCeiling changes the ceiling (the model's ℓ(1) or SLO changed) and
// returns the factor, lowered to the new ceiling if need be, and whether it
// changed.
func (c *Calibration) SetCeiling(ceiling float64) (float64, bool) {
	c.ceiling = min(max(ceiling, 1), CalibrationMax)
	c.typical = min(c.typical, c.ceiling)
	if c.factor > c.ceiling {
		c.factor = c.ceiling
		return c.factor, true
	}
	return c.factor, false
}

// Carried returns a copy of c for the same model's next entry on the same
// gpu-let (a retune: a new batch cap, interference factor or SLO on the same
// runtime), under the new ceiling. What the window measured still holds
// there; starting again from factor 1 would plan the first batches after
// every such re-plan with the bare profile, against a device the window
// already knew to be slower. The simulator keeps a placed model's
// calibration the same way.
func (c *Calibration) Carried(ceiling float64) Calibration {
	d := *c
	d.sorted = make([]float64, 0, CalibrationWindow)
	d.SetCeiling(ceiling)
	return d
}

// Factor is the current multiplier of the profiled ℓ(b): a high quantile,
// for deciding when batches start.
func (c *Calibration) Factor() float64 { return c.factor }

// Typical is the median multiplier over the same window (at least 1, at
// most Factor): the ℓ(1) a request is refused by is the profiled one scaled
// by it (Scheduler.SetLatencies), so a few slow batches make batches start
// earlier but do not turn requests away.
func (c *Calibration) Typical() float64 { return min(c.typical, c.factor) }

// Idle forgets the window when no batch ran for CalibrationForget before
// now, and returns the factor and whether it changed.
func (c *Calibration) Idle(now time.Duration) (float64, bool) {
	if c.n > 0 && now-c.last > CalibrationForget {
		c.n, c.next = 0, 0
		if c.factor != 1 || c.typical != 1 {
			c.factor, c.typical = 1, 1
			return 1, true
		}
	}
	return c.factor, false
}

// Observe folds in one batch that ended at now after measured, when the
// scheduler's ℓ (the profile scaled by the current factor) predicted
// predicted. It returns the factor and whether it or Typical changed.
func (c *Calibration) Observe(now, measured, predicted time.Duration) (float64, bool) {
	c.Idle(now)
	c.last = now
	if predicted <= 0 || measured <= 0 {
		return c.factor, false
	}
	c.ratios[c.next] = float64(measured) / float64(predicted) * c.factor // measured / profile
	c.next = (c.next + 1) % CalibrationWindow
	c.n = min(c.n+1, CalibrationWindow)
	if c.n < CalibrationMinBatches {
		return c.factor, false
	}
	c.sorted = append(c.sorted[:0], c.ratios[:c.n]...)
	slices.Sort(c.sorted)
	q := c.sorted[max(c.n-1-CalibrationSkip, 0)]
	next := min(max(q, 1), c.ceiling)
	typ := min(max(c.sorted[c.n/2], 1), c.ceiling)
	moved := func(old, v float64) bool { return v > old*(1+CalibrationStep) || v < old*(1-CalibrationStep) }
	changed := false
	if moved(c.factor, next) {
		c.factor, changed = next, true
	}
	if moved(c.typical, typ) {
		c.typical, changed = typ, true
	}
	return c.factor, changed
}
