package daemon

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/internal/monoclock"
)

// ErrNoGpulet is returned for a model that no ready gpu-let serves.
var ErrNoGpulet = errors.New("no gpu-let serves the model")

// router sends each request of a model to one of the gpu-lets serving it,
// with the routing policy of executor/sched (staggering batches as one
// shared queue would), over the state executors publish. The table of
// routes is swapped whole when a plan is applied.
type router struct {
	epoch time.Time
	table atomic.Pointer[map[string]*modelRoute]
}

// modelRoute is one model's gpu-lets.
type modelRoute struct {
	mu      sync.Mutex
	gpulets []*gpuletRun
	targets []sched.Target // parallel to gpulets; Route updates them in place
	// base is each gpu-let's ℓ(b) as planned (parallel to gpulets);
	// factor the calibration factor its executor last reported, by which
	// the target's Latency is base scaled, as its scheduler's is.
	base   []sched.Latency
	factor []float64
}

// routeEntry is one gpu-let of a model in a new table: its plan weight and
// ℓ(b) there.
type routeEntry struct {
	g      *gpuletRun
	weight float64
	lat    sched.Latency
}

func newRouter() *router {
	r := &router{epoch: time.Now()}
	empty := map[string]*modelRoute{}
	r.table.Store(&empty)
	return r
}

// now is the router's clock.
func (r *router) now() time.Duration { return time.Since(r.epoch) }

// fromHost converts an instant of the host's monotonic clock, as executors
// send them (internal/monoclock), to the router's clock.
func (r *router) fromHost(ns int64) time.Duration { return monoclock.Time(ns).Sub(r.epoch) }

// at is t, a time with Go's monotonic reading (a request's deadline), on
// the router's clock.
func (r *router) at(t time.Time) time.Duration { return t.Sub(r.epoch) }

// install replaces the routing table atomically. Targets of gpu-lets that
// were already routed keep their last state.
func (r *router) install(entries map[string][]routeEntry) {
	old := *r.table.Load()
	next := make(map[string]*modelRoute, len(entries))
	for model, es := range entries {
		mr := &modelRoute{}
		for _, e := range es {
			t := sched.Target{Weight: e.weight}
			t.FreeAt = r.now()
			factor := 1.0
			if prev := old[model]; prev != nil {
				prev.mu.Lock()
				for i, g := range prev.gpulets {
					if g == e.g {
						t.RouteState = prev.targets[i].RouteState
						t.Sent = prev.targets[i].Sent
						t.Credit = prev.targets[i].Credit
						factor = prev.factor[i]
					}
				}
				prev.mu.Unlock()
			}
			t.Latency = e.lat
			if factor != 1 {
				t.Latency = e.lat.Scaled(factor)
			}
			mr.gpulets = append(mr.gpulets, e.g)
			mr.targets = append(mr.targets, t)
			mr.base = append(mr.base, e.lat)
			mr.factor = append(mr.factor, factor)
		}
		next[model] = mr
	}
	r.table.Store(&next)
}

// errCannotFinish: a reroute found no other gpu-let where the request can
// still finish.
var errCannotFinish = errors.New("no other gpu-let can finish it in time")

// routeAny picks the gpu-let for one request due at deadline among the
// gpu-lets of every model in models, as one route over their targets
// together: the plan's rates weigh them, so each model takes its planned
// share (a pipeline step over its variants, as the simulator routes one).
// It returns the model and gpu-let chosen. not, when set, is left out (a
// reroute) and then a gpu-let where the request cannot finish is no choice.
// by (at most deadline) is when a request of a low priority level must
// finish to be routed at all (sched.RouteBy); when it cannot, the error
// wraps errShed.
func (r *router) routeAny(models []string, deadline, by time.Duration, not *gpuletRun) (string, *gpuletRun, sched.Routing, error) {
	table := *r.table.Load()
	names := models
	if len(names) > 1 {
		names = slices.Clone(models)
		slices.Sort(names) // routes are locked in name order: no two routings deadlock
		names = slices.Compact(names)
	}
	type ref struct {
		model string
		mr    *modelRoute
		i     int
	}
	refs, targets := make([]ref, 0, 4), make([]sched.Target, 0, 4) // room for most routes
	for _, name := range names {
		mr := table[name]
		if mr == nil {
			continue
		}
		mr.mu.Lock()
		defer mr.mu.Unlock()
		for i, g := range mr.gpulets {
			if g == not {
				continue
			}
			mr.targets[i].Down = g.down.Load() || g.stalled()
			mr.targets[i].Draining = g.draining.Load()
			refs = append(refs, ref{name, mr, i})
			targets = append(targets, mr.targets[i])
		}
	}
	if len(targets) == 0 {
		return "", nil, 0, fmt.Errorf("route %s: %w", strings.Join(names, "|"), ErrNoGpulet)
	}
	k, how, err := sched.RouteBy(r.now(), deadline, by, targets)
	if err != nil {
		return "", nil, 0, fmt.Errorf("route %s: %w: %w", strings.Join(names, "|"), ErrNoGpulet, err)
	}
	if how == sched.Shed { // the targets are as they were
		return "", nil, how, fmt.Errorf("route %s: %w", strings.Join(names, "|"), errShed)
	}
	for j, rf := range refs {
		rf.mr.targets[rf.i] = targets[j]
	}
	if not != nil && how == sched.Unreachable {
		return "", nil, 0, fmt.Errorf("reroute %s: %w: %w", strings.Join(names, "|"), ErrNoGpulet, errCannotFinish)
	}
	return refs[k].model, refs[k].mr.gpulets[refs[k].i], how, nil
}

// update takes an executor's published state into every route it serves.
func (r *router) update(g *gpuletRun, st *pb.ExecutorState) {
	table := *r.table.Load()
	for _, ms := range st.Models {
		mr := table[ms.Name]
		if mr == nil {
			continue
		}
		mr.mu.Lock()
		for i, tg := range mr.gpulets {
			if tg != g {
				continue
			}
			rs := &mr.targets[i].RouteState
			rs.FreeAt = r.fromHost(st.FreeAtMonoNs)
			rs.Queued = int(ms.Queued)
			rs.Size = int(ms.Batch)
			rs.Ahead = time.Duration(ms.AheadNs)
			rs.DispatchAt = int(ms.DispatchAt)
			rs.IdleRule, rs.IdleCut = ms.IdleRule, min(max(ms.IdleCut, 0), 1)
			rs.Deadline, rs.Exec, rs.Latest = 0, 0, 0
			// The executor's scheduler plans with ℓ(b) scaled by its
			// calibration; the route predicts with the same.
			if f := max(ms.LatencyFactor, 1); f != mr.factor[i] {
				mr.factor[i], rs.Latency = f, mr.base[i].Scaled(f)
			}
			if ms.Queued > 0 {
				rs.Deadline = r.fromHost(ms.DeadlineMonoNs)
				rs.Exec = r.fromHost(ms.ExecMonoNs)
				rs.Latest = r.fromHost(ms.LatestMonoNs)
			}
		}
		mr.mu.Unlock()
	}
}

// queued is how many of model's requests wait in its gpu-lets' queues, as
// the router sees them: what each executor last reported (with each
// batch's last answer, after the next batch started) and what was routed
// there since, less the batches whose time has come since
// (sched.RouteState.QueuedAt): a request that found its gpu-let idle runs
// at once and waits no more, though its executor says so only once its
// batch ends.
func (r *router) queued(model string) int {
	mr := (*r.table.Load())[model]
	if mr == nil {
		return 0
	}
	now := r.now()
	mr.mu.Lock()
	defer mr.mu.Unlock()
	n := 0
	for _, t := range mr.targets {
		n += t.QueuedAt(now)
	}
	return n
}

// batchRows is how many rows the gpu-lets serving models take in one batch
// each, together (their ℓ(b)'s largest b).
func (r *router) batchRows(models []string) int {
	table := *r.table.Load()
	n := 0
	for _, m := range models {
		mr := table[m]
		if mr == nil {
			continue
		}
		mr.mu.Lock()
		for _, t := range mr.targets {
			n += max(t.Latency.MaxBatch(), 1)
		}
		mr.mu.Unlock()
	}
	return n
}

// models lists the routed models.
func (r *router) models() map[string][]*gpuletRun {
	out := map[string][]*gpuletRun{}
	for m, mr := range *r.table.Load() {
		mr.mu.Lock()
		out[m] = append([]*gpuletRun(nil), mr.gpulets...)
		mr.mu.Unlock()
	}
	return out
}
