package daemon

import (
	"fmt"
	"time"

	"github.com/gpulet/gpuletd/profiler/store"
)

// stallMark says a gpu-let's executor has stalled: a request sent to it had
// no answer by its deadline and grace (answerGrace), and the executor had
// sent nothing at all since, not even a state. Its process may be stopped
// (SIGSTOP, a frozen cgroup), starved, or stuck in the kernel; the health
// checks kill it after healthFailures misses, seconds later, and until then
// the router sends its models' requests to their other gpu-lets rather than
// to a queue nobody reads. The mark lasts until the executor's client hears
// a frame again (a late answer, a state) or a new executor replaces it.
type stallMark struct {
	client inferrer // the executor's client when it stalled
	gen    uint64   // which of the gpu-let's executors it was (gpuletRun.gen)
	heard  uint64   // its client's frames heard then
	since  time.Time
	model  string // the model of the request that found it
}

// over reports whether g's executor has been heard since the mark, or
// another has replaced it.
func (m *stallMark) over(g *gpuletRun) bool {
	return m.client.Heard() != m.heard || m.gen != g.gen.Load()
}

// markStalled marks g's executor gen, reached through client, stalled: a
// request of model due at deadline found it silent. A stall already marked
// stays as it is, so that one event says when it began; an executor
// replaced since is not marked.
func (g *gpuletRun) markStalled(client inferrer, gen uint64, model string, deadline time.Time) {
	m := &stallMark{client: client, gen: gen, heard: client.Heard(), since: deadline, model: model}
	old := g.stall.Load()
	if m.over(g) || (old != nil && !old.over(g)) || !g.stall.CompareAndSwap(old, m) {
		return
	}
	g.sup.events.add(EventExecutorStall, store.SeverityWarning,
		fmt.Sprintf("executor on %s sent nothing since a %s request went to it, due %s: its models' requests go to their other gpu-lets until it answers; its health checks restart it if it stays silent",
			g.id, model, deadline.Format("15:04:05.000")),
		map[string]string{"gpulet": g.id, "models": g.modelList(), "model": model})
}

// stalled reports whether g's executor is marked stalled and has not been
// heard since; the router skips a stalled gpu-let as it does one that is
// down. It records nothing (the router calls it under a route's lock):
// heardAgain does, from the monitor.
func (g *gpuletRun) stalled() bool { return !g.stalledSince().IsZero() }

// stalledSince is when the stall of g's executor began (the deadline of the
// request that found it); zero when it is not stalled.
func (g *gpuletRun) stalledSince() time.Time {
	if m := g.stall.Load(); m != nil && !m.over(g) {
		return m.since
	}
	return time.Time{}
}

// heardAgain ends a stall mark the executor has been heard since, with an
// event that says how long it lasted. The monitor calls it at every tick.
// (A mark of an executor since replaced ends with the restart's events.)
func (g *gpuletRun) heardAgain(now time.Time) {
	m := g.stall.Load()
	if m == nil || !m.over(g) || !g.stall.CompareAndSwap(m, nil) || m.gen != g.gen.Load() {
		return
	}
	g.sup.events.add(EventExecutorStall, store.SeverityInfo,
		fmt.Sprintf("executor on %s answers again, after about %s without a word", g.id, now.Sub(m.since).Round(time.Millisecond)),
		map[string]string{"gpulet": g.id, "models": g.modelList()})
}
