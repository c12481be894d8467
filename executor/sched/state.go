package sched

import (
	"fmt"
	"time"
)

// PublishInterval is how often at most an executor publishes its route
// state to the router (when it changed): the daemon asks its executors for
// this, and the simulator routes on state refreshed no more often, so both
// routers see equally stale state and predict alike between reports (Route
// admits requests and predicts dispatches on the state it routes on).
const PublishInterval = 500 * time.Microsecond

// RouteState is what a gpu-let publishes about one of its models for the
// router: when the gpu-let frees and the batch forming for the model.
type RouteState struct {
	// FreeAt is when the gpu-let is expected to be free: the time of the
	// report if it is idle, else the running batch's expected end (never
	// before the report); for a batch far past its expected end
	// (overrunning), as long again as it has overrun.
	FreeAt time.Duration
	// Queued is how many requests of the model wait.
	Queued int
	// Size is the forming batch's size: GETBATCH at the time of the report
	// (0 when nothing waits).
	Size int
	// Deadline is the earliest deadline among the waiting requests.
	Deadline time.Duration
	// Exec is the earliest moment the forming batch may be dispatched under
	// the policy (never before the report; a busy gpu-let may start it later).
	Exec time.Duration
	// Latest is the last moment the forming batch can start: Deadline − ℓ(Size).
	Latest time.Duration
	// Latency is ℓ(b) for the model on this gpu-let.
	Latency Latency
	// Ahead is the work the gpu-let's other models have queued: the sum of
	// ℓ of their forming batches. A new batch of this model may wait for it
	// on a shared gpu-let; 0 where the model is alone.
	Ahead time.Duration
	// DispatchAt is the queue length from which the policy dispatches the
	// forming batch at once rather than waiting for more (1 under eager;
	// under deferred the first length whose next request gains too little,
	// at most MaxBatch); 0 means MaxBatch. The router's predictions between
	// reports follow it.
	DispatchAt int
	// IdleRule says the policy bounds a waiting batch's idle time (the
	// deferred policy's idle rule, gain.go); the router's predictions
	// between reports follow it.
	IdleRule bool
	// IdleCut is the part of the idle rule's bound a waiting batch does not
	// wait, on a gpu-let busy a small part of the time (busy_share.go): 0
	// waits it whole. The router's predictions follow it.
	IdleCut float64
}

// RouteState reports the state the router needs for model id as of now. It
// changes nothing; drivers call Advance(now) first so that due timers have
// fired.
func (s *Scheduler) RouteState(now time.Duration, id ModelID) (RouteState, error) {
	m := s.model(id)
	if m == nil {
		return RouteState{}, fmt.Errorf("report route state of model %d: %w", id, ErrUnknownModel)
	}
	now = max(now, s.now)
	st := RouteState{FreeAt: now, Queued: m.q.n, Latency: m.lat}
	if s.busy {
		st.FreeAt = max(now, s.running.End)
		if overrun(s.running, now) {
			st.FreeAt = now + (now - s.running.End)
		}
	}
	for _, o := range s.models {
		if o != nil && o != m && o.q.n > 0 {
			st.Ahead += o.lat.At(max(batchAt(o, now), 1))
		}
	}
	st.DispatchAt = s.dispatchAt(m)
	st.IdleRule = s.pol.kind == kindDeferred && s.pol.gain
	if st.IdleRule && !s.busy {
		st.IdleCut = 1 - s.busyShare.idleScale(now)
	}
	if m.q.n > 0 {
		st.Size = batchAt(m, now)
		st.Deadline = m.q.front().Deadline
		st.Exec = max(now, s.readyAt(m))
		if s.pol.guard == guardBusy && s.guarded() {
			st.Exec = now // the shared-gpu-let rule: no idling while two models wait
		}
		if st.Size > 0 {
			st.Latest = st.Deadline - m.lat.At(st.Size)
		}
	}
	return st, nil
}

// dispatchAt is the queue length from which m's batch is dispatchable at
// once under the policy (see RouteState.DispatchAt).
func (s *Scheduler) dispatchAt(m *model) int {
	switch s.pol.kind {
	case kindDeferred:
		if s.pol.gain {
			for n := 1; n < m.maxB; n++ {
				if !m.gains[n] {
					return n
				}
			}
		}
		return m.maxB
	case kindTimeout:
		return m.maxB
	}
	return 1
}

// OverrunFloor is the least time past its expected end a running batch
// must be, and at least its own expected time, before RouteState takes it
// for overrunning: a run that hangs (a custom operator that loops, a
// kernel that never ends) or a device far slower than profiled. Its
// gpu-let is then reported free only as long after the report as the
// batch has overrun, so that the router sends the models' requests to
// their other gpu-lets rather than to a queue behind a run that may never
// end, and tries it again later, each time later. A batch that ran late
// by the timing noise of a device (a few percent of its time), or that
// the simulator runs, never comes near it.
const OverrunFloor = 50 * time.Millisecond

// overrun says whether running batch b is far past its expected end at
// now (OverrunFloor).
func overrun(b Batch, now time.Duration) bool {
	return now-b.End > max(b.End-b.Start, OverrunFloor)
}
