package sched

import (
	"fmt"
	"time"
)

// SetPolicy switches the scheduler to p at now (a reload of the daemon's
// configuration). Queued requests stay queued and a running batch runs on;
// from now each model's timers follow p, and a batch p finds dispatchable
// starts within this call (a deferred queue switched to eager dispatches at
// once).
func (s *Scheduler) SetPolicy(now time.Duration, p Policy) error {
	if p == nil {
		p = Deferred{}
	}
	if err := validate(p); err != nil {
		return fmt.Errorf("set policy: %w", err)
	}
	now = s.clock(now)
	s.policy, s.pol = p, p.spec()
	s.order = s.order[:0]
	for _, m := range s.models {
		if m != nil {
			m.opos = -1
		}
	}
	for _, m := range s.models {
		if m == nil {
			continue
		}
		if s.pol.kind == kindTimeout {
			s.recomputeAmin(m)
		}
		s.rekey(m)
	}
	s.altWake = never
	s.advance(now)
	return nil
}
