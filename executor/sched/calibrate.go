package sched

import (
	"fmt"
	"time"
)

// SetLatency replaces a model's ℓ(b), for drivers that calibrate it against
// measured batch times. Queued requests stay; their timers are recomputed,
// and requests that can no longer finish even alone under the new ℓ are
// rejected at once.
func (s *Scheduler) SetLatency(now time.Duration, id ModelID, lat Latency) error {
	return s.SetLatencies(now, id, lat, 0)
}

// SetLatencies is SetLatency with a separate ℓ(1) for refusal: a request is
// refused as DeadlineUnreachable only when it cannot finish alone in admit
// (the typical batch time), while when to start batches and how large is
// decided with lat (a pessimistic one, so deferred batches end in time). A
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
	m.lat, m.l1, m.maxB, m.best, m.gains = lat, admit, lat.MaxBatch(), bestBatches(lat), deferGains(lat)
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
