package sched

import "time"

// Turns on a shared gpu-let.
//
// The plan checks a shared gpu-let's duty cycle: every model's request may
// wait for one (capped) batch of each other model and still meet its SLO.
// The policies order batches by urgency, so a model whose requests come
// far faster than the plan's rate (a flood), or whose batches run far
// longer than its profile says, always has the most urgent heads, its
// oldest requests, and would take the gpu-let batch after batch while the
// others' requests expire behind it. The rule that keeps the duty cycle the
// plan checked: when running a model's batch now would make another
// model's head miss its deadline, and that head was already waiting while
// the first model's last batch ran while the other has not run since, the
// other goes first. A waiting model thus waits for at most one batch of
// another before its turn, as the plan's duty cycle assumes; what a flood asks beyond its turns expires, for that
// model alone. Where every head can still be served in the policy's order
// nobody owes a turn, so a gpu-let with one model, or with models that do
// not crowd each other, is scheduled as without the rule.

// turnLag pushes a model that owes another a turn behind every model that
// does not.
const turnLag = 24 * time.Hour

// neverRan is the last batch start of a model that has not run.
const neverRan = time.Duration(-1 << 62)

// owesTurn tells whether m must let another model with queued requests run
// first at now: one whose head was waiting while m's last batch ran (it
// arrived before that batch ended), that has not run since, and that could
// no longer finish its head after the batch m would run now (its GETBATCH,
// or the window head dropping picks). Where every head can still be served
// in the policy's order, nobody owes a turn. It walks the models with
// queued requests only (the expiry heap's).
func (s *Scheduler) owesTurn(m *model, now time.Duration) bool {
	if m.lastStart == neverRan {
		return false
	}
	end := time.Duration(-1)
	for _, e := range s.expiry.e {
		o := s.models[e.id]
		if o == m || o.lastStart >= m.lastStart {
			continue
		}
		h := o.q.front()
		if h.Arrival >= m.lastEnd {
			continue
		}
		if end < 0 {
			_, k := s.gather(m, now)
			end = now + m.lat.At(max(k, 1))
		}
		if end+o.l1 > h.Deadline {
			return true
		}
	}
	return false
}

// turnLag is what m's order key is pushed back by at now: turnLag when it
// owes another model a turn.
func (s *Scheduler) turnLag(m *model, now time.Duration) time.Duration {
	if s.owesTurn(m, now) {
		return turnLag
	}
	return 0
}
