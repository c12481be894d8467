package sched

import (
	"cmp"
	"slices"
	"time"
)

// The shared-gpu-let rule of the deferred policy.
//
// A deferred batch may start only inside its window [d − ℓ(|B|+1), d − ℓ(|B|)],
// ℓ(|B|+1) − ℓ(|B|) wide. Symphony can count on one of many GPUs being free
// in that window; on a gpu-let that several models share by temporal sharing
// (gpuletd's MERGE), another model's batch dispatched just before the window
// opens runs through it, and the waiting batch shrinks or loses its head
// requests: at 30% of the capacity, 10 models on one gpu-let lose 15.5% of
// their requests, where eager loses none (docs/BENCHMARKS.md).
//
// The rule (guardBusy, the default): while two or more models have requests
// queued, the gpu-let does not idle. When it is free it dispatches, among all
// of them, the batch with the smallest latest moment d − ℓ(|B|) (GETBATCH at
// that instant), whether or not its frontrun has come — unless that batch
// could still grow and another model's batch is dispatchable and leaves it
// room (readyInstead): then that one runs first. A batch waits for its
// frontrun only while its model is the only one with requests queued: then no
// other batch can take the gpu-let inside its window except one that arrives
// later, and that arrival ends the wait at once.
//
// Why it is safe: idling while two models wait gains nothing that running
// one of them loses. The idle time is gone for good, and the queued work must
// then fit into less time before its deadlines, which is exactly how the
// windows collide. Running the most urgent batch now leaves the others to keep
// growing while it runs, as they would while the gpu-let idled. The schedule is
// then earliest-latest-moment first and work-conserving whenever there is a
// choice, like eager's; what a request can find ahead of it beyond what eager
// would leave is essentially one batch of a model that was deferring alone
// when it arrived (a batch eager would have started earlier).
// Measured (docs/BENCHMARKS.md): no loss at the loads eager serves without
// loss, batches larger than eager's, capacity at least eager's on the
// synthetic 10-model gpu-let. With one model per gpu-let the rule never
// applies, so that case is Symphony's Algorithm 1 exactly.
//
// Cost: a count of non-empty models (the expiry heap's size) per decision and,
// when the rule applies, one walk over the non-empty models per dispatch.

// guardMode selects how the deferred policy treats a shared gpu-let.
type guardMode uint8

const (
	// guardOff: Symphony's rule alone, each batch waits for its frontrun.
	guardOff guardMode = iota
	// guardBusy: the rule above.
	guardBusy
	// guardChain and guardBlock: measured alternatives (guard_alt.go).
	guardChain
	guardBlock
)

// guarded reports whether the shared-gpu-let rule decides the next dispatch:
// it is on, and at least two models have requests queued.
func (s *Scheduler) guarded() bool {
	switch s.pol.guard {
	case guardBusy:
		return len(s.expiry.e) > 1
	case guardChain, guardBlock:
		return len(s.order) > 1
	}
	return false
}

// guardedDispatch is tryDispatch when guarded (gpu-let free).
func (s *Scheduler) guardedDispatch(now time.Duration) {
	switch s.pol.guard {
	case guardChain:
		s.chainDispatch(now)
		return
	case guardBlock:
		s.blockDispatch(now)
		return
	}
	var best *model
	var bestKey time.Duration
	for _, e := range s.expiry.e {
		m := s.models[e.id]
		k := batchAt(m, now)
		if k == 0 { // cannot happen after expire; be safe
			continue
		}
		key := m.q.front().Deadline - m.lat.At(k) + s.turnLag(m, now)
		if best == nil || key < bestKey || (key == bestKey && m.id < best.id) {
			best, bestKey = m, key
		}
	}
	if best != nil && s.ready.key(best.id) > now {
		if m := s.readyInstead(now); m != nil {
			best = m
		}
	}
	if best != nil {
		skip, k := s.gather(best, now)
		s.dispatch(now, best, skip, k)
	}
}

// readyInstead is the batch the shared-gpu-let rule runs before the most
// urgent one when that one is not dispatchable yet (it could still grow):
// among the models whose batch is dispatchable at now (full, past its
// frontrun, or gaining nothing from waiting), the smallest latest moment
// whose batch, run now, leaves every other model with requests queued able
// to run all of them (up to its largest batch) after it by its head's
// deadline; nil when there is none.
//
// Why: under the rule alone the most urgent model of a shared gpu-let — the
// one with the shortest SLO, whose latest moments come first — took the
// gpu-let with batches far smaller than the plan's whenever another model
// waited, and the other models, whose batches were already as large as the
// plan's, waited behind it until their own latest moments; the gpu-let then
// did less work per second than the plan's duty cycle (igniter-v100's
// short-skew mix, alexnet and vgg19 on one V100: 95% of vgg19's requests
// within SLO at 0.875 of the planned rate). Running the dispatchable batch
// first costs the urgent model nothing it needs (its whole queue still fits
// after it) and lets its batch grow meanwhile.
func (s *Scheduler) readyInstead(now time.Duration) *model {
	s.room = s.room[:0]
	for _, e := range s.expiry.e {
		s.room = append(s.room, s.models[e.id])
	}
	slices.SortFunc(s.room, func(a, b *model) int { return cmp.Compare(a.q.front().Deadline, b.q.front().Deadline) })
	var pick *model
	var pickKey time.Duration
	for _, m := range s.room {
		if s.ready.key(m.id) > now {
			continue
		}
		k := batchAt(m, now)
		if k == 0 {
			continue
		}
		key := m.q.front().Deadline - m.lat.At(k)
		if pick != nil && key >= pickKey {
			continue
		}
		if _, g := s.gather(m, now); s.leavesRoom(m, now+m.lat.At(max(g, 1))) {
			pick, pickKey = m, key
		}
	}
	return pick
}

// leavesRoom reports whether, after a batch of m ending at end, every other
// model in s.room (the models with requests queued, by head deadline) can
// still run its queue (up to its largest batch) by its head's deadline, one
// after another in that order (earliest deadline first, which fits them
// whenever any order does).
func (s *Scheduler) leavesRoom(m *model, end time.Duration) bool {
	for _, o := range s.room {
		if o == m {
			continue
		}
		end += o.lat.At(max(1, min(o.q.n, o.maxB)))
		if end > o.q.front().Deadline {
			return false
		}
	}
	return true
}
