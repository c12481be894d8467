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
	// 0 counts as 1, a negative weight excludes the target). It only breaks
	// ties: see Route.
	Weight float64
	// Draining and Down exclude the target: draining before a plan change,
	// unhealthy.
	Draining, Down bool
	// Sent counts the requests Route has sent here; Route increments it.
	Sent uint64
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
	}
	return "unknown"
}

// Route picks the gpu-let for a request with the given deadline arriving at
// now, so that batches stay as large as one shared queue would make them
// (Symphony §3.3, staggered execution):
//
//  1. Absorb: among targets whose forming batch holds the whole queue
//     (Size = Queued ≥ 1, Size < MaxBatch) and is still feasible with the
//     request, started as soon as the gpu-let frees:
//     max(now, FreeAt) + ℓ(Size+1) ≤ min(Deadline, deadline),
//     the one that will dispatch soonest, max(now, FreeAt, Exec).
//  2. Otherwise, among targets where the request can finish alone once the
//     gpu-let is free for it, avail + ℓ(1) ≤ deadline, the one free first.
//     avail is max(now, FreeAt) when nothing waits there, else the end of
//     the forming batch, max(now, FreeAt, Exec) + ℓ(Size) (a backlog beyond
//     one batch is not counted). A new batch thus starts on the gpu-let
//     whose previous batch ends first, and the gpu-lets' batches interleave
//     instead of all shrinking.
//  3. Otherwise the target where it would finish soonest alone,
//     avail + ℓ(1); the outcome is Unreachable and that gpu-let rejects it.
//
// Targets that are Draining, Down or have no Latency are skipped; when none
// is left Route returns ErrNoTarget. Exact ties in 1 and 2 (typically several
// idle gpu-lets) go to the target furthest below its weighted share of the
// requests sent so far (a deficit counter over Sent and Weight), then to the
// lower index, so that with equal weights idle gpu-lets with higher indices
// stay idle at low load (load-proportional use, Symphony §3.2).
//
// Route increments the chosen target's Sent and updates its RouteState with
// the request's predicted effect (as the deferred policy would form the
// batch); the next published state replaces the prediction.
func Route(now, deadline time.Duration, targets []Target) (int, Routing, error) {
	var weights float64
	var sent uint64
	for i := range targets {
		t := &targets[i]
		if t.usable() {
			weights += t.weight()
			sent += t.Sent
		}
	}
	if weights == 0 {
		return -1, 0, fmt.Errorf("route request: %w among %d targets", ErrNoTarget, len(targets))
	}
	// deficit: how far a target is below its share; larger goes first.
	deficit := func(t *Target) float64 { return t.weight()/weights*float64(sent) - float64(t.Sent) }
	better := func(at, bestAt time.Duration, t, best *Target) bool {
		if at != bestAt {
			return at < bestAt
		}
		return deficit(t) > deficit(best)
	}

	pick, how := -1, Absorbed
	var pickAt time.Duration
	for i := range targets {
		t := &targets[i]
		if !t.usable() || t.Size < 1 || t.Size != t.Queued || t.Size >= t.Latency.MaxBatch() {
			continue
		}
		start := max(now, t.FreeAt)
		if start+t.Latency.At(t.Size+1) > min(t.Deadline, deadline) {
			continue
		}
		at := max(start, t.Exec)
		if pick < 0 || better(at, pickAt, t, &targets[pick]) {
			pick, pickAt = i, at
		}
	}
	if pick < 0 {
		how = FreesFirst
		for i := range targets {
			t := &targets[i]
			if !t.usable() {
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
	}
	if pick < 0 {
		how = Unreachable
		for i := range targets {
			t := &targets[i]
			if !t.usable() {
				continue
			}
			end := t.availableAt(now) + t.Latency.At(1)
			if pick < 0 || better(end, pickAt, t, &targets[pick]) {
				pick, pickAt = i, end
			}
		}
	}
	t := &targets[pick]
	t.Sent++
	if how != Unreachable {
		t.admit(now, deadline)
	}
	return pick, how, nil
}

func (t *Target) usable() bool {
	return !t.Draining && !t.Down && t.Latency.MaxBatch() > 0 && t.Weight >= 0
}

// availableAt is when the gpu-let could start a new batch for the model: when
// it frees, or after the forming batch if one waits.
func (t *Target) availableAt(now time.Duration) time.Duration {
	at := max(now, t.FreeAt)
	if t.Queued == 0 {
		return at
	}
	at = max(at, t.Exec)
	if t.Size > 0 {
		at += t.Latency.At(min(t.Size, t.Latency.MaxBatch()))
	}
	return at
}

func (t *Target) weight() float64 {
	if t.Weight == 0 {
		return 1
	}
	return t.Weight
}

// admit predicts the state after a request with deadline joins the queue at
// now, as the deferred policy would see it.
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
	if st.Queued < maxB {
		st.Exec = max(now, st.Deadline-st.Latency.At(st.Queued+1))
	}
}
