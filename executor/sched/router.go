package sched

import (
	"fmt"
	"time"
)

// Target is one gpu-let serving a model, as the router sees it.
type Target struct {
	// RouteState is the gpu-let's last published state for the model.
	// Route updates it in place with a prediction of the request's effect,
	// so that requests routed before the next report see it.
	RouteState
	// Weight is the plan's rate share for this gpu-let (any positive scale;
	// 0 counts as 1, a negative weight excludes the target): see Route.
	Weight float64
	// Draining and Down exclude the target: draining before a plan change,
	// unhealthy.
	Draining, Down bool
	// Sent counts the requests Route has sent here; Route increments it.
	Sent uint64
	// Credit is the target's standing against its weighted share: each
	// routed request adds Weight/ΣWeight to every usable target's credit and
	// takes 1 from the chosen one's. It stays within ± the target's largest
	// batch (its burst): one gpu-let may take a whole batch while its
	// siblings wait (staggered execution), the long-run split follows the
	// weights, and a target that was down or new neither hoards nor owes
	// more than one batch.
	Credit float64
}

// Routing says how Route chose its target.
type Routing uint8

// The ways Route chooses.
const (
	// Absorbed: the request joins a forming batch that stays feasible.
	Absorbed Routing = iota + 1
	// FreesFirst: no forming batch could take it; it goes to the gpu-let
	// that frees first among those where it can still finish alone.
	FreesFirst
	// Unreachable: no gpu-let can finish it by its deadline; it goes to the
	// one where it would finish soonest, which rejects it with
	// DeadlineUnreachable, so every rejection is counted by a gpu-let.
	Unreachable
	// Shed: a gpu-let could finish it by its deadline but none by the
	// earlier instant RouteBy admits it by (a low priority's reserve); it is
	// refused before it reaches one, and no target's credit or count changed.
	Shed
)

// String names the routing outcome.
func (r Routing) String() string {
	switch r {
	case Absorbed:
		return "absorbed"
	case FreesFirst:
		return "frees_first"
	case Unreachable:
		return "unreachable"
	case Shed:
		return "shed"
	}
	return "unknown"
}

// Route picks the gpu-let for a request with the given deadline arriving at
// now. The plan's shares come first, then the queues: batches stay as large
// as one shared queue would make them (Symphony §3.3, staggered execution)
// within each gpu-let's share of the model's requests.
//
// A target's credit (see Target.Credit), this request's share included, says
// how far it is below its weighted share of the requests routed. Targets
// whose credit is above minus their largest batch are within their share; the choice among
// them is:
//
//  1. Absorb: among targets whose forming batch holds the whole queue
//     (Size = Queued ≥ 1, Size < MaxBatch) and is still feasible with the
//     request, started once the gpu-let is free and its other models' work
//     is done: max(now, FreeAt) + Ahead + ℓ(Size+1) ≤ min(Deadline, deadline),
//     the one that will dispatch soonest, max(now, FreeAt, Exec).
//  2. Otherwise, among targets where the request can finish alone once the
//     gpu-let is free for it, avail + ℓ(1) ≤ deadline, the one free first.
//     avail is max(now, FreeAt) + Ahead when nothing of the model waits
//     there, else the end of the forming batch, max(now, FreeAt, Exec) +
//     Ahead + ℓ(Size), plus the backlog behind it (availableAt). A new
//     batch thus starts on the gpu-let whose previous batch ends first, and
//     the gpu-lets' batches interleave instead of all shrinking.
//
// When no target within its share can meet the deadline, the request spills:
// 1 and 2 are tried over every target. When none at all can, it goes to the
// target where it would finish soonest alone, avail + ℓ(1); the outcome is
// Unreachable and that gpu-let rejects it.
//
// Targets that are Draining, Down or have no Latency are skipped; when none
// is left Route returns ErrNoTarget. Exact ties go to the larger credit,
// then to the lower index, so that with equal weights idle gpu-lets with
// higher indices stay idle at low load (load-proportional use, Symphony
// §3.2).
//
// Route increments the chosen target's Sent and updates its RouteState with
// the request's predicted effect (as the deferred policy would form the
// batch); the next published state replaces the prediction.
func Route(now, deadline time.Duration, targets []Target) (int, Routing, error) {
	return RouteBy(now, deadline, deadline, targets)
}

// RouteBy routes as Route does a request that is admitted only where it
// can finish by by (at most deadline): a request of a low priority, for
// which the gpu-lets keep the time between by and its deadline for the
// requests of higher ones (trunk reservation). Its queue then stops
// growing past by, and a request of a higher priority that comes after it
// still finds room before its own deadline. When a gpu-let could finish it
// by its deadline but none by by, the outcome is Shed, with index -1, and
// the targets' credits and counts are as they were (their states advanced
// to now, as any route does); when none could by its deadline either, it
// is Unreachable as in Route. The batch it joins is predicted with its real
// deadline.
func RouteBy(now, deadline, by time.Duration, targets []Target) (int, Routing, error) {
	by = min(by, deadline)
	var weights float64
	for i := range targets {
		if t := &targets[i]; t.usable() {
			weights += t.weight()
		}
	}
	if weights == 0 {
		return -1, 0, fmt.Errorf("route request: %w among %d targets", ErrNoTarget, len(targets))
	}
	var credits []float64 // restored when the request is shed
	if by < deadline {
		credits = make([]float64, len(targets))
		for i := range targets {
			credits[i] = targets[i].Credit
		}
	}
	for i := range targets {
		if t := &targets[i]; t.usable() {
			t.Credit = min(t.Credit+t.weight()/weights, float64(t.burst()))
			t.advance(now)
		}
	}
	within := func(t *Target) bool { return t.Credit > -float64(t.burst()) }
	all := func(*Target) bool { return true }
	pick, how := choose(now, by, targets, within)
	if pick < 0 {
		pick, how = choose(now, by, targets, all)
	}
	if pick < 0 && by < deadline {
		if j, _ := choose(now, deadline, targets, all); j >= 0 {
			for i := range targets {
				targets[i].Credit = credits[i]
			}
			return -1, Shed, nil
		}
	}
	if pick < 0 {
		how = Unreachable
		var pickAt time.Duration
		for i := range targets {
			t := &targets[i]
			if !t.usable() {
				continue
			}
			end := t.availableAt(now) + t.Latency.At(1)
			if pick < 0 || end < pickAt || (end == pickAt && t.Credit > targets[pick].Credit) {
				pick, pickAt = i, end
			}
		}
	}
	t := &targets[pick]
	t.Sent++
	t.Credit = max(t.Credit-1, -float64(t.burst()))
	if how != Unreachable {
		t.admit(now, deadline)
	}
	return pick, how, nil
}

// choose applies Route's steps 1 and 2 to the usable targets ok accepts; -1
// when none can meet the deadline. Ties go to the larger credit.
func choose(now, deadline time.Duration, targets []Target, ok func(*Target) bool) (int, Routing) {
	better := func(at, bestAt time.Duration, t, best *Target) bool {
		if at != bestAt {
			return at < bestAt
		}
		return t.Credit > best.Credit
	}
	pick := -1
	var pickAt time.Duration
	for i := range targets {
		t := &targets[i]
		if !t.usable() || !ok(t) || t.Size < 1 || t.Size != t.Queued || t.Size >= t.Latency.MaxBatch() {
			continue
		}
		start := max(now, t.FreeAt)
		if start+t.Ahead+t.Latency.At(t.Size+1) > min(t.Deadline, deadline) {
			continue
		}
		at := max(start, t.Exec)
		if pick < 0 || better(at, pickAt, t, &targets[pick]) {
			pick, pickAt = i, at
		}
	}
	if pick >= 0 {
		return pick, Absorbed
	}
	for i := range targets {
		t := &targets[i]
		if !t.usable() || !ok(t) {
			continue
		}
		avail := t.availableAt(now)
		if avail+t.Latency.At(1) > deadline {
			continue
		}
		if pick < 0 || better(avail, pickAt, t, &targets[pick]) {
			pick, pickAt = i, avail
		}
	}
	return pick, FreesFirst
}

func (t *Target) usable() bool {
	return !t.Draining && !t.Down && t.Latency.MaxBatch() > 0 && t.Weight >= 0
}

// availableAt is when the gpu-let could start a batch with the request in
// it: when it frees and its other models' work is done, or, if requests
// wait, after the forming batch and the full batches (MaxBatch each) of the
// backlog behind it, each after one turn of the other models' work (Ahead,
// the plan's duty cycle); the request joins the backlog's last, partial
// batch, which starts after one more turn. Counting the full batches is
// what lets a request spill to a sibling when a gpu-let has fallen behind
// its share (a shared gpu-let planned full: igniter-v100's short-skew mix
// went from 0.94 to 1.0 of its planned rate served); a backlog of less than
// one batch is the next batch, which the request joins (staggered batches
// of one model on many gpu-lets).
func (t *Target) availableAt(now time.Duration) time.Duration {
	at := max(now, t.FreeAt) + t.Ahead
	if t.Queued == 0 {
		return at
	}
	at = max(at, t.Exec+t.Ahead)
	mb := t.Latency.MaxBatch()
	if t.Size > 0 {
		at += t.Latency.At(min(t.Size, mb))
	}
	if rest := t.Queued - max(t.Size, 0); rest > 0 {
		at += time.Duration(rest/mb) * (t.Latency.At(mb) + t.Ahead)
		if rest%mb > 0 {
			at += t.Ahead
		}
	}
	return at
}

// burst is how far a target's credit may go either way: its largest batch.
func (t *Target) burst() int { return max(t.Latency.MaxBatch(), 1) }

func (t *Target) weight() float64 {
	if t.Weight == 0 {
		return 1
	}
	return t.Weight
}

// advance predicts, between two published states, that the forming batch
// has been dispatched once its time came: when the gpu-let was free and the
// batch dispatchable (max(FreeAt, Exec) ≤ now), it runs ℓ(Size) from then and
// the requests beyond it form the next batch. On a freshly published state
// it changes nothing (the gpu-let would already have dispatched it).
func (st *RouteState) advance(now time.Duration) {
	if st.Queued == 0 || st.Size < 1 {
		return
	}
	start := max(st.FreeAt, st.Exec)
	if start > now {
		return
	}
	st.FreeAt = start + st.Latency.At(min(st.Size, st.Latency.MaxBatch()))
	st.Queued -= min(st.Size, st.Queued)
	if st.Queued == 0 {
		st.Size, st.Deadline, st.Exec, st.Latest = 0, 0, 0, 0
		return
	}
	// The rest waits for the gpu-let; its deadlines are not known here.
	st.Size = min(st.Queued, st.Latency.MaxBatch())
	st.Exec = st.FreeAt
}

// QueuedAt is how many requests st predicts still wait at now: a forming
// batch whose time came before now has been dispatched (advance), so its
// requests run and wait no more, though no state since has said so.
func (st RouteState) QueuedAt(now time.Duration) int {
	st.advance(now)
	return st.Queued
}

func (st *RouteState) dispatchAt() int {
	if st.DispatchAt > 0 {
		return st.DispatchAt
	}
	return st.Latency.MaxBatch()
}

// admit predicts the state after a request with deadline joins the queue at
// now, as the policy would see it: the batch waits for its frontrun until it
// reaches DispatchAt requests, and under the idle rule at most its idle
// bound (less its IdleCut) after the gpu-let frees or the request came,
// whichever is later.
func (st *RouteState) admit(now, deadline time.Duration) {
	whole := st.Size == st.Queued
	st.Queued++
	if st.Queued == 1 || deadline < st.Deadline {
		st.Deadline = deadline
	}
	if !whole {
		return // the forming batch is bounded by its deadline or MaxBatch
	}
	maxB := st.Latency.MaxBatch()
	st.Size = st.Latency.Largest(st.Deadline-now, st.Queued)
	if st.Size > 0 {
		st.Latest = st.Deadline - st.Latency.At(st.Size)
	}
	st.Exec = now
	if n := st.Queued; n < maxB && n < st.dispatchAt() {
		st.Exec = max(now, st.Deadline-st.Latency.At(n+1))
		if st.IdleRule {
			wait := time.Duration(float64(idleWait(st.Latency, n)) * (1 - st.IdleCut))
			st.Exec = min(st.Exec, max(now, st.FreeAt)+wait)
		}
	}
}
