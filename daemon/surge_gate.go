package daemon

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/control"
)

// pauseLate is how late past its time a timer of the daemon may fire
// before the daemon takes it that it was not running (stopped, its virtual
// machine paused, its host loaded past its cores) or too short of CPU to
// read its sockets. Requests waited in them meanwhile: read as it runs
// again, they would count as a surge in the window they are read in, and
// they miss their SLOs for the daemon's pause, not for want of the plan's
// room; the executors' answers waited too, and their silence says nothing
// of them (stall.go). The daemon stopped for 1 s every 5 s under a steady
// load of six models read every stop as a surge, or else as the plan's
// misses, and re-planned them (scripts/bench/daemon-pause.sh). A CPU
// quota's throttling, which stops a group for the rest of its 100 ms
// period, stays under it.
const pauseLate = 100 * time.Millisecond

// pauseEvery is how often the pause watch looks: a pause longer than
// pauseEvery and pauseLate is found. A shorter one shifts too few requests
// into the next window to read as a surge (that takes half a second's:
// control.SurgeFactor over the plan's headroom), and four looks a second
// cost the idle daemon next to nothing (idle for 30 s it took 30–50 ms of
// CPU, 20–30 ms before the watch).
const pauseEvery = 250 * time.Millisecond

// missQuiet is how long after a pause the miss rule forgets what it counted
// at every surge check: it counts from the first check that long after the
// daemon ran again, once the requests read late have been answered.
const missQuiet = 2 * control.SurgeCheck

// pauseWatch finds the daemon's pauses on a ticker of its own, which the
// plan loop's work (a re-plan) does not hold up.
type pauseWatch struct {
	mu      sync.Mutex
	resumed time.Time // when the daemon last ran again after a pause
}

// run watches until ctx ends.
func (w *pauseWatch) run(ctx context.Context) {
	t := time.NewTicker(pauseEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case tick := <-t.C:
			w.observe(tick, time.Now())
		}
	}
}

// observe is a tick due at tick and taken at now.
func (w *pauseWatch) observe(tick, now time.Time) {
	if now.Sub(tick) > pauseLate {
		w.mu.Lock()
		w.resumed = now
		w.mu.Unlock()
	}
}

// last is when the daemon last ran again after a pause; zero if never.
func (w *pauseWatch) last() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.resumed
}

// pauseSettle is how long after the daemon runs again it may still be
// reading what waited in its sockets: a surge window open then may hold
// requests that arrived before it opened.
const pauseSettle = 250 * time.Millisecond

// surgeSkipMost bounds how many surge checks in a row a pause may leave
// unjudged: a daemon paused all the time still judges every third window.
const surgeSkipMost = 2

// surgeGate decides, at each surge check, whether the check judges its
// window and whether the miss rule forgets what it counted, from the
// pauses the watch found. The plan loop owns it.
type surgeGate struct {
	checked time.Time // when the last check ran: the window opened then
	skipped int       // checks in a row that did not judge
}

// pass is the surge check at now, the daemon last resumed after a pause at
// resumed. It does not judge its window (judge false: the caller closes it
// unjudged) when the window was open while the daemon ran again and read
// what waited in its sockets (from resumed to pauseSettle after), which it
// may count as this window's though it arrived before the window opened; a
// window that opened before the pause counts what arrived in it, but one
// cannot tell it from one that opened as the daemon ran again, before its
// readers read. The miss rule forgets its counts (forget) at every check
// within missQuiet of a pause.
func (g *surgeGate) pass(resumed, now time.Time) (judge, forget bool) {
	opened := g.checked
	g.checked = now
	paused := !resumed.IsZero()
	judge = !paused || opened.After(resumed.Add(pauseSettle)) || g.skipped >= surgeSkipMost
	if judge {
		g.skipped = 0
	} else {
		g.skipped++
	}
	forget = paused && now.Sub(resumed) < missQuiet
	return judge, forget
}

// gatedSurgeCheck is surgeCheck through gate, the daemon last resumed
// after a pause at resumed: a window gate does not judge is closed with no
// re-plan, and the miss rule forgets what it counted when gate says so.
func (n *node) gatedSurgeCheck(gate *surgeGate, resumed, now, start, last time.Time) (string, map[string]float64) {
	judge, forget := gate.pass(resumed, now)
	if forget {
		n.restartMisses()
	}
	if !judge {
		n.rates.closeShort(now)
		n.log.Debug("the daemon was paused: the surge check closes its window unjudged", zap.Time("resumed", resumed))
		return "", nil
	}
	return n.surgeCheck(now, start, last)
}

// restartMisses makes the miss rule count afresh (control.Misses.Restart).
func (n *node) restartMisses() {
	n.misses.mu.Lock()
	defer n.misses.mu.Unlock()
	n.misses.m.Restart()
}
