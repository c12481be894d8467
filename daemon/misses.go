package daemon

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulet/gpuletd/control"
)

// missRule is the node's miss rule (control.Misses) under its lock: the plan
// loop checks it every surge check and closes its periods, and every plan
// (a re-plan, a preview) is made with its room.
type missRule struct {
	mu sync.Mutex
	m  control.Misses
}

// missTally counts a model's outcomes for the miss rule (modelCounters).
type missTally struct {
	answered, missed atomic.Uint64
}

// add counts one outcome: answered in time, or not (missed).
func (t *missTally) add(missed bool) {
	t.answered.Add(1)
	if missed {
		t.missed.Add(1)
	}
}

// missCounts says whether the miss rule counts a failed request, and that
// it is the plan's SLO miss: the request met a gpu-let with no room for
// it. A client's fault, a refusal over the share of an overloaded node, an
// executor down, a model moved away, or a request whose own timeout (or
// its queue policy's) was shorter than its model's SLO, or that its
// priority level's bound refused, are no misses of the plan's room, and
// are not counted at all.
func (e *inferError) missCounts() (counted, missed bool) {
	if e.ownLimit {
		return false, false
	}
	switch e.reason {
	case reasonDeadline, reasonDropped, reasonQueueFull, reasonShedPriority:
		return true, true
	case reasonOverShare, reasonExecutorDown, reasonExecutorFailed, reasonUnroutable:
		return false, false
	}
	return true, false
}

// room is the headroom to plan with: control's, and each model's extra
// from the miss rule.
func (n *node) room() control.Room {
	n.misses.mu.Lock()
	defer n.misses.mu.Unlock()
	return n.misses.m.Room(control.Headroom)
}

// tallies is every model's miss-rule counts now.
func (n *node) tallies() map[string]control.Tally {
	out := map[string]control.Tally{}
	n.counters.m.Range(func(k, v any) bool {
		c := v.(*modelCounters)
		out[k.(string)] = control.Tally{Answered: c.miss.answered.Load(), Missed: c.miss.missed.Load()}
		return true
	})
	return out
}

// missCheck applies the miss rule to the plan in force at now, the last
// re-plan at last (both since the plan loop began), a re-plan planning for
// estimates: why the node re-plans, "" when it does not. A node serving
// pipelines re-plans every period anyway (keepPlan) and is left to that.
func (n *node) missCheck(now, last time.Duration, estimates map[string]float64) string {
	n.planMu.Lock()
	cur := n.current.Load()
	pipelines := len(n.catalog.allPipelines()) > 0
	settled := cur != nil && !pipelines && control.Settled(n.running(), cur.plan)
	n.planMu.Unlock()
	if cur == nil || pipelines {
		return ""
	}
	t := n.tallies()
	n.misses.mu.Lock()
	defer n.misses.mu.Unlock()
	return n.misses.m.Check(control.MissInput{Now: now, LastPlan: last, Plan: cur.plan, Settled: settled, Tallies: t,
		Estimates: estimates, Headroom: control.Headroom})
}

// closeMissPeriod closes the miss rule's period: a model that stopped
// missing keeps less of its extra headroom.
func (n *node) closeMissPeriod() {
	t := n.tallies()
	n.misses.mu.Lock()
	defer n.misses.mu.Unlock()
	n.misses.m.Period(t)
}
