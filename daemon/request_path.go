package daemon

import (
	"math"
	"slices"
	"sync"
	"time"
)

// The request path's CPU, measured, and counted in the CPU device's plans
// where it runs on a gpu-let's own core.
//
// Every request costs CPU beyond its model's run: the daemon reads, checks,
// routes and answers it, and its executor reads it and writes the answer.
// Beside a GPU that work runs on the host's cores, off the device. On the
// CPU device it runs on the very cores the gpu-lets hold, and a plan that
// counted the models' runs alone placed several times what the node serves:
// the demo of `make run` held 756 req/s of a mix planned to take 4 657
// (BENCHMARKS, "Served within the SLOs, found by a sweep"). So the node
// measures the path's CPU per request at the end of every reorganize
// period. A CPU gpu-let's executor runs on the gpu-let's cores, its
// reading and writing one after the other with its batches: the CPU's
// plans add the executors' share to every request a batch holds
// (planningProfile). The daemon's share runs on whichever core is free,
// each gpu-let's in turn, so it is no one gpu-let's time: it is measured and
// shown, not planned with (charged to each request's own gpu-let, it held
// the demo's lenet5 to a third of what the node serves).

// minPathRequests is the fewest requests a period must answer for the CPU
// per request measured over it to be kept: over fewer, the daemon's own
// work between requests (plans, scrapes, timers) would read as the
// requests' cost. Until a period has, the last kept figure stands, and
// before any nothing is counted.
const minPathRequests = 1000

// pathSample is one look at the CPU the request path has used so far.
type pathSample struct {
	at time.Time
	// daemonCPU is the daemon's CPU time; answered, the requests it
	// answered (served, refused or failed).
	daemonCPU time.Duration
	answered  int64
	// lets are the CPU device's gpu-lets of one core, by ID.
	lets map[string]letSample
}

// letSample is one look at a CPU gpu-let's executor.
type letSample struct {
	// started is when its executor started (the host's monotonic clock,
	// internal/monoclock): a new executor's counts start again.
	started int64
	// sent is how many requests the daemon sent it (those it refused or
	// dropped cost it CPU too); busy how long its batches ran; cpu the
	// executor's CPU time.
	sent      int64
	busy, cpu time.Duration
}

// pathCost is the request path's CPU per request between two samples:
// the daemon's per request it answered, and the executors' beyond their
// batches (CPU time less the time their batches ran) per request the daemon
// sent them, over the gpu-lets whose executor ran through both. Either is 0
// where no request counts; answered and sent say over how many.
//
// Only gpu-lets of one core are sampled (samplePath): on a larger one ONNX
// Runtime's threads spin between runs, CPU time that says nothing of the
// requests. A gpu-let of one core runs its executor's reading and writing
// and its batches on that core, one after the other.
func pathCost(prev, cur pathSample) (daemon, executors time.Duration, answered, sent int64) {
	if answered = cur.answered - prev.answered; answered > 0 {
		daemon = max(cur.daemonCPU-prev.daemonCPU, 0) / time.Duration(answered)
	}
	var used time.Duration
	for id, c := range cur.lets {
		p, ok := prev.lets[id]
		if !ok || p.started != c.started || c.sent < p.sent {
			continue
		}
		sent += c.sent - p.sent
		used += max((c.cpu-p.cpu)-(c.busy-p.busy), 0)
	}
	if sent > 0 {
		executors = used / time.Duration(sent)
	}
	return daemon, executors, max(answered, 0), sent
}

// requestPathStatus is the request path's CPU per request as last
// measured, as the status shows it.
type requestPathStatus struct {
	// PerRequestUS is the CPU one request takes beyond its model's run, µs:
	// DaemonUS, the daemon's, plus ExecutorsUS, its executor's. ExecutorsUS
	// is nil where no period measured it (none sent minPathRequests to the
	// CPU's gpu-lets of one core: a GPU node's executors are not measured),
	// and PerRequestUS is then the daemon's alone; a 0 there read as
	// executors that take no CPU.
	PerRequestUS float64  `json:"per_request_us"`
	DaemonUS     float64  `json:"daemon_us"`
	ExecutorsUS  *float64 `json:"executors_us,omitempty"`
	// Answered is how many requests the daemon answered over the period
	// measured, and Sent how many of them it sent the CPU's gpu-lets of
	// one core (their executors' share is measured over those).
	Answered int64 `json:"answered"`
	Sent     int64 `json:"sent"`
	// At is when that period ended.
	At time.Time `json:"at"`
}

// requestPath keeps the request path's CPU per request: observe takes a
// sample at the end of each period, and each share is the median of the
// last pathWindow periods that measured it (a period answering
// minPathRequests or more; for the executors' share, sending as many to
// the CPU's gpu-lets of one core).
type requestPath struct {
	mu   sync.Mutex
	prev *pathSample
	// daemons and executors are the last periods' figures, µs, oldest
	// first.
	daemons, executors []float64
	cur                *requestPathStatus // nil before a period answered enough
	// movedUS is the executors' share observe last said moved.
	movedUS float64
}

// pathWindow is how many periods' figures a share is the median of: a
// period in which a re-plan reloads a model on a CPU gpu-let counts the
// executor's loading and warming up as its requests' CPU (347 µs a
// request for one lenet5 period at 2 000 req/s, against 60–86 µs in the
// others), and the median of three leaves such a period out.
const pathWindow = 3

// pathMove is how far the executors' share must move, as a part of the one
// last reported, for observe to say it moved: the periods' own spread is
// well within it (the lenet5 periods above).
const pathMove = 0.25

// observe closes the period since the previous sample with s. It says
// whether the executors' share, which the CPU's plans count, moved: its
// first measurement, or one pathMove away from the last that moved.
func (r *requestPath) observe(s pathSample) (moved bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.prev
	r.prev = &s
	if prev == nil {
		return false
	}
	daemon, executors, answered, sent := pathCost(*prev, s)
	if answered < minPathRequests {
		return false
	}
	r.daemons = lastOf(append(r.daemons, us(daemon)), pathWindow)
	if sent >= minPathRequests {
		r.executors = lastOf(append(r.executors, us(executors)), pathWindow)
	}
	st := &requestPathStatus{DaemonUS: median(r.daemons), Answered: answered, Sent: sent, At: s.at}
	st.PerRequestUS = st.DaemonUS
	r.cur = st
	if len(r.executors) == 0 {
		return false
	}
	x := median(r.executors)
	st.ExecutorsUS, st.PerRequestUS = &x, st.PerRequestUS+x
	if x == 0 || math.Abs(x-r.movedUS) <= pathMove*r.movedUS {
		return false
	}
	r.movedUS = x
	return true
}

// lastOf is the last k of xs.
func lastOf(xs []float64, k int) []float64 { return xs[max(len(xs)-k, 0):] }

// median is the middle of xs, the lower of the two middle ones for an even
// count; 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[(len(s)-1)/2]
}

// get is the last kept measurement; nil before one.
func (r *requestPath) get() *requestPathStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return nil
	}
	c := *r.cur
	return &c
}

// executorMS is the executors' CPU per request, which the CPU's plans
// count, in ms; 0 before a measurement.
func (r *requestPath) executorMS() float64 {
	if c := r.get(); c != nil && c.ExecutorsUS != nil {
		return *c.ExecutorsUS / 1000
	}
	return 0
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
