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
	heard  uint64   // its client's frames heard when the request that found it went out
	since  time.Time
	model  string // the model of the request that found it
}

// over reports whether g's executor has been heard since the mark, or
// another has replaced it.
func (m *stallMark) over(g *gpuletRun) bool {
	return m.client.Heard() != m.heard || m.gen != g.gen.Load()
}

// stallConfirm is how long a request that found its executor silent waits
// for a frame from it before marking it stalled, and stallPoll how often it
// looks. A live executor's answers may lie unread in the socket while the
// daemon itself was short of CPU (its timers fire before its readers run),
// and an executor whose loop runs answers the withdrawal the request just
// sent at once: with the daemon stopped 0.5 s every 5 s under load, live
// executors were marked stalled in two runs of two without it
// (scripts/bench/daemon-pause.sh). A wait for an answer that ended more
// than pauseLate past its time suspects nothing at all (ask): the daemon
// itself was not running, or a backlog of requests read at once as it ran
// again, on two cores, kept the readers of the executors' answers waiting
// past stallConfirm (with the daemon stopped 1 s every 5 s under load, 2 of
// 4 runs still marked a live executor stalled after stallConfirm alone).
const (
	stallConfirm = 50 * time.Millisecond
	stallPoll    = 5 * time.Millisecond
)

// suspectStall is called when a request of model due at deadline found g's
// executor gen, reached through client, silent since heard, its frames
// before the request went to it. It waits up to stallConfirm for a frame
// and, if none comes, marks the executor stalled; it reports whether g is
// marked stalled then.
func (g *gpuletRun) suspectStall(client inferrer, gen uint64, model string, deadline time.Time, heard uint64) bool {
	if g.stalled() {
		return true
	}
	tick := time.NewTicker(stallPoll)
	defer tick.Stop()
	for wait := time.After(stallConfirm); client.Heard() == heard; {
		select {
		case <-tick.C:
		case <-wait:
			g.markStalled(client, gen, model, deadline, heard)
			return g.stalled()
		}
	}
	return false
}

// markStalled marks g's executor gen, reached through client, stalled: a
// request of model due at deadline found it silent, heard its client's
// frames before the request went to it. The mark lasts until the client
// hears more: a frame read after the request left ends it, even one read
// before this call (an executor that answered at last would otherwise stay
// marked, and skipped by the router, for as long as it had nothing more to
// say). A stall already marked stays as it is, so that one event says when
// it began; an executor replaced since is not marked.
func (g *gpuletRun) markStalled(client inferrer, gen uint64, model string, deadline time.Time, heard uint64) {
	m := &stallMark{client: client, gen: gen, heard: heard, since: deadline, model: model}
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
