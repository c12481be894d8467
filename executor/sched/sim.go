package sched

import (
	"fmt"
	"time"
)

// ExecutorSpec is one gpu-let in a simulation.
type ExecutorSpec struct {
	Config Config
	Models []ModelSpec
	// Weight is the router weight of this gpu-let for all its models (0 → 1).
	Weight float64
}

// ModelSpec places a model on a simulated gpu-let.
type ModelSpec struct {
	ID ModelID
	ModelConfig
}

// Observer sees every event of a simulation; exec is the gpu-let's index, or
// -1 for a request no gpu-let serves. Batches follow Batch's validity rule.
type Observer interface {
	Dispatched(exec int, b Batch)
	Completed(exec int, b Batch)
	Preempted(exec int, now time.Duration, b Batch)
	Rejected(exec int, now time.Duration, r Request, why Reason)
}

// SimStats sums up a simulation.
type SimStats struct {
	// Requests counts requests read from the source.
	Requests uint64
	// Completed counts requests in batches that ran to completion, Batches
	// those batches.
	Completed, Batches uint64
	// Late counts completed requests whose batch ended after their deadline
	// (0 when ℓ is exact, as in Sim).
	Late uint64
	// Preemptions counts preempted batches.
	Preemptions uint64
	// Rejected counts rejections by reason (index by Reason).
	Rejected [numReasons]uint64
	// End is the virtual time of the last event.
	End time.Duration
}

// Rejections returns the number of rejected requests for all reasons.
func (s SimStats) Rejections() uint64 {
	var n uint64
	for _, v := range s.Rejected {
		n += v
	}
	return n
}

// MeanBatch is the mean size of completed batches.
func (s SimStats) MeanBatch() float64 {
	if s.Batches == 0 {
		return 0
	}
	return float64(s.Completed) / float64(s.Batches)
}

// Sim drives gpu-lets in virtual time: it feeds arrivals (routed with Route
// when a model is on several gpu-lets), fires the schedulers' timers, and
// completes each batch exactly ℓ(|B|) after it starts. Events at the same
// instant go in the order: batch completions, arrivals, timers. Sim is the
// Sink of the schedulers it makes; it is not safe for concurrent use.
type Sim struct {
	execs   []simExec
	targets [][]Target // by model id: the gpu-lets serving it
	owners  [][]int    // by model id: their exec indices
	obs     Observer
	stats   SimStats
	now     time.Duration
}

type simExec struct {
	s     *Scheduler
	busy  bool
	seq   uint64
	start time.Duration
	end   time.Duration
	used  time.Duration // time spent running batches, preempted ones included
}

// simSink adapts one gpu-let's decisions to the Sim.
type simSink struct {
	sim *Sim
	idx int
}

// NewSim makes the gpu-lets' schedulers (model sets are fixed for the run).
// obs may be nil.
func NewSim(execs []ExecutorSpec, obs Observer) (*Sim, error) {
	if len(execs) == 0 {
		return nil, fmt.Errorf("new simulation: %w: no executors", ErrBadConfig)
	}
	sim := &Sim{obs: obs, execs: make([]simExec, len(execs))}
	for i, spec := range execs {
		sk := &simSink{sim: sim, idx: i}
		s, err := New(spec.Config, sk)
		if err != nil {
			return nil, fmt.Errorf("new simulation: executor %d: %w", i, err)
		}
		for _, ms := range spec.Models {
			if err := s.AddModel(0, ms.ID, ms.ModelConfig); err != nil {
				return nil, fmt.Errorf("new simulation: executor %d: %w", i, err)
			}
			for int(ms.ID) >= len(sim.targets) {
				sim.targets = append(sim.targets, nil)
				sim.owners = append(sim.owners, nil)
			}
			sim.targets[ms.ID] = append(sim.targets[ms.ID], Target{Weight: spec.Weight})
			sim.owners[ms.ID] = append(sim.owners[ms.ID], i)
		}
		sim.execs[i] = simExec{s: s}
	}
	return sim, nil
}

// Scheduler returns gpu-let i's scheduler, for inspection.
func (sim *Sim) Scheduler(i int) *Scheduler { return sim.execs[i].s }

// BusyTime returns how long gpu-let i has spent running batches so far
// (preempted batches up to their preemption included); with the run's End it
// gives the gpu-let's busy ratio.
func (sim *Sim) BusyTime(i int) time.Duration { return sim.execs[i].used }

// Stats returns the counters so far.
func (sim *Sim) Stats() SimStats { return sim.stats }

// Run feeds every request of src and runs until no event is left.
func (sim *Sim) Run(src Source) (SimStats, error) {
	next, more := src.Next()
	for {
		tArr := never
		if more {
			tArr = next.Arrival
			if tArr < sim.now {
				return sim.stats, fmt.Errorf("run simulation: request %d at %v after %v: %w", next.ID, tArr, sim.now, ErrTimeOrder)
			}
		}
		tDone, iDone := never, -1
		tWake, iWake := never, -1
		for i := range sim.execs {
			e := &sim.execs[i]
			if e.busy && e.end < tDone {
				tDone, iDone = e.end, i
			}
			if w, ok := e.s.NextWakeup(); ok && w < tWake {
				tWake, iWake = max(w, sim.now), i
			}
		}
		switch {
		case iDone >= 0 && tDone <= tArr && tDone <= tWake:
			sim.now = tDone
			if err := sim.complete(iDone); err != nil {
				return sim.stats, err
			}
		case more && tArr <= tWake:
			sim.now = tArr
			if err := sim.arrive(next); err != nil {
				return sim.stats, err
			}
			next, more = src.Next()
		case iWake >= 0:
			sim.now = tWake
			sim.execs[iWake].s.Advance(tWake)
		default:
			sim.stats.End = sim.now
			return sim.stats, nil
		}
	}
}

func (sim *Sim) complete(i int) error {
	e := &sim.execs[i]
	b, _ := e.s.Running()
	sim.stats.Batches++
	sim.stats.Completed += uint64(len(b.Requests))
	for _, r := range b.Requests {
		if b.End > r.Deadline {
			sim.stats.Late++
		}
	}
	if sim.obs != nil {
		sim.obs.Completed(i, b)
	}
	e.busy = false
	e.used += b.End - b.Start
	if err := e.s.BatchDone(sim.now, e.seq); err != nil {
		return fmt.Errorf("run simulation: executor %d: %w", i, err)
	}
	return nil
}

func (sim *Sim) arrive(r Request) error {
	sim.stats.Requests++
	var owners []int
	if int(r.Model) < len(sim.owners) {
		owners = sim.owners[r.Model]
	}
	exec := -1
	switch len(owners) {
	case 0:
	case 1:
		exec = owners[0]
	default:
		ts := sim.targets[r.Model]
		for j, i := range owners {
			st, err := sim.execs[i].s.RouteState(sim.now, r.Model)
			if err != nil {
				return fmt.Errorf("run simulation: %w", err)
			}
			ts[j].RouteState = st
		}
		j, _, err := Route(sim.now, r.Deadline, ts)
		if err == nil {
			exec = owners[j]
		}
	}
	if exec < 0 {
		sim.stats.Rejected[Unroutable]++
		if sim.obs != nil {
			sim.obs.Rejected(-1, sim.now, r, Unroutable)
		}
		return nil
	}
	return sim.execs[exec].s.Submit(sim.now, r)
}

// Dispatch records the batch's end, ℓ(|B|) after its start.
func (k *simSink) Dispatch(now time.Duration, b Batch) {
	e := &k.sim.execs[k.idx]
	e.busy, e.seq, e.start, e.end = true, b.Seq, b.Start, b.End
	if k.sim.obs != nil {
		k.sim.obs.Dispatched(k.idx, b)
	}
}

// Reject counts the rejection.
func (k *simSink) Reject(now time.Duration, r Request, why Reason) {
	k.sim.stats.Rejected[why]++
	if k.sim.obs != nil {
		k.sim.obs.Rejected(k.idx, now, r, why)
	}
}

// Preempt cancels the batch's completion.
func (k *simSink) Preempt(now time.Duration, b Batch) {
	e := &k.sim.execs[k.idx]
	e.busy = false
	e.used += now - e.start
	k.sim.stats.Preemptions++
	if k.sim.obs != nil {
		k.sim.obs.Preempted(k.idx, now, b)
	}
}
