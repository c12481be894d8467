package sched

import (
	"fmt"
	"time"
)

// Recalibrate gives the scheduler a model's profiled ℓ(b) scaled by its
// calibration c and returns the ℓ(b) batches are now planned with. The
// executor and the simulator both call it after c moved.
func (s *Scheduler) Recalibrate(now time.Duration, id ModelID, base Latency, c *Calibration) (Latency, error) {
	lat, admit := c.apply(base)
	return lat, s.SetLatencies(now, id, lat, admit)
}

// BatchEnded is BatchDone for drivers that calibrate ℓ (the executor and
// the simulator): it ends batch seq at now, then, when c is not nil, folds
// in how long the batch took against the time ℓ planned for it, and when the
// calibration moved gives the scheduler the batch's model's base ℓ scaled by
// it (Recalibrate). BatchDone may start the next batch first; the
// calibration still compares the batch that ended with its own plan. It
// returns the ℓ the model's batches are now planned with and whether it
// changed; on ErrNoBatch nothing is calibrated.
func (s *Scheduler) BatchEnded(now time.Duration, seq uint64, took time.Duration, base Latency, c *Calibration) (Latency, bool, error) {
	b := s.running
	if err := s.BatchDone(now, seq); err != nil {
		return Latency{}, false, err
	}
	if c == nil {
		return Latency{}, false, nil
	}
	if _, changed := c.Observe(s.now, took, b.End-b.Start); !changed {
		return Latency{}, false, nil
	}
	return s.recalibrated(s.now, b.Model, base, c)
}

// CalibrationIdle is what a driver that calibrates ℓ does as a request of
// model id comes: when no batch ran for CalibrationForget, c forgets its
// window (Calibration.Idle) and the scheduler gets base scaled by the reset
// factor. It returns the ℓ the model's batches are now planned with and
// whether it changed.
func (s *Scheduler) CalibrationIdle(now time.Duration, id ModelID, base Latency, c *Calibration) (Latency, bool, error) {
	if _, changed := c.Idle(now); !changed {
		return Latency{}, false, nil
	}
	return s.recalibrated(now, id, base, c)
}

// recalibrated is Recalibrate after c moved, reported as BatchEnded and
// CalibrationIdle report it.
func (s *Scheduler) recalibrated(now time.Duration, id ModelID, base Latency, c *Calibration) (Latency, bool, error) {
	lat, err := s.Recalibrate(now, id, base, c)
	if err != nil {
		return Latency{}, false, err
	}
	return lat, true, nil
}

// SetLatencies replaces a model's ℓ(b), for drivers that calibrate it
// against measured batch times (Recalibrate). Queued requests stay; their
// timers are recomputed. A request is refused as DeadlineUnreachable (on
// arrival, and queued requests at once) only when it cannot finish alone in
// admit, the typical batch time, while when to start batches and how large
// is decided with lat, a pessimistic one, so deferred batches end in time. A
// request that admit lets through but lat says is already late runs alone at
// once, best effort. admit is capped at lat's ℓ(1); 0 means lat's.
func (s *Scheduler) SetLatencies(now time.Duration, id ModelID, lat Latency, admit time.Duration) error {
	now = s.clock(now)
	m := s.model(id)
	if m == nil {
		return fmt.Errorf("set latency of model %d: %w", id, ErrUnknownModel)
	}
	if lat.MaxBatch() < 1 {
		return fmt.Errorf("set latency of model %d: %w: empty latency table", id, ErrBadLatency)
	}
	if admit <= 0 || admit > lat.At(1) {
		admit = lat.At(1)
	}
	m.lat, m.l1, m.maxB, m.best, m.gains, m.idle = lat, admit, lat.MaxBatch(), bestBatches(lat), deferGains(lat), idleWaits(lat)
	if c := m.maxB; cap(s.run) < c {
		s.run = make([]Request, 0, c)
		if s.busy {
			s.run = append(s.run, s.running.Requests...)
			s.running.Requests = s.run
		}
	}
	s.rekey(m)
	s.advance(now)
	return nil
}

// Scaled returns ℓ with every batch latency multiplied by f (> 0), keeping
// it non-decreasing.
func (l Latency) Scaled(f float64) Latency {
	ns := make([]time.Duration, len(l.ns))
	for b := 1; b < len(ns); b++ {
		ns[b] = max(time.Duration(float64(l.ns[b])*f), ns[b-1], 1)
	}
	return Latency{ns: ns}
}
