package control

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/gpulet/gpuletd/gpulet"
)

// Node is what a reorganization drives: the daemon's executors and router,
// or the simulator's virtual gpu-lets and router. H is the node's handle of
// one running gpu-let. Start and Stop may be called concurrently with
// themselves, and Route with Start; every other call comes alone.
type Node[H comparable] interface {
	// Start starts a new gpu-let for let on the plan's GPU gpu, with its
	// models loaded and warmed up; it does not serve until Route. When the
	// gpu-let starts but some of its models do not load, Start returns its
	// handle and a *ModelsNotLoaded: the gpu-let serves the others.
	Start(ctx context.Context, gpu *gpulet.GPUPlan, let gpulet.GPULet) (H, error)
	// Load adds model p of the plan's let to a kept gpu-let, loaded and
	// warmed up, before the routes switch.
	Load(ctx context.Context, h H, gpu *gpulet.GPUPlan, let gpulet.GPULet, p gpulet.Placement) error
	// Retune gives a kept gpu-let's models the plan's batch caps and
	// interference factors; a model it cannot retune keeps serving as it
	// was, which is the node's to report.
	Retune(ctx context.Context, h H, gpu *gpulet.GPUPlan, let gpulet.GPULet)
	// Route points the router at the serving gpu-lets, at once. It may
	// come while Starts run (a gpu-let that started after the old ones
	// drained serves as soon as it has started), never two at a time.
	Route(serving []Serving[H])
	// Stop drains a gpu-let the plan drops (no new requests; it finishes
	// what it holds) and stops it; what fails there is the node's to
	// report, the gpu-let is off the routes either way.
	Stop(ctx context.Context, h H)
	// Unload takes a model a kept gpu-let lost off it once its requests
	// there are done.
	Unload(ctx context.Context, h H, model string)
}

// Serial is implemented by nodes whose Start and Stop calls must come one
// at a time in the plan's order (a simulator that must repeat exactly):
// then Reorganize makes no concurrent call.
type Serial interface{ Serial() bool }

// Overlapper is implemented by nodes that can start a gpu-let on room that
// old gpu-lets hold while those still serve (CPU cores, shared with them
// until they stop and then its own). Reorganize starts a gpu-let that did
// not fit beside the old ones that way when the old gpu-lets it would wait
// for serve a model only it would serve and draining the others made no
// room: draining those first would leave the models unrouted until it had
// started.
type Overlapper[H comparable] interface {
	// StartOver is Node.Start on the room of over, gpu-lets to stop on
	// the same GPU; an error says the node cannot start it so (a kind of
	// device whose room cannot be shared) or that it failed. Calls may be
	// concurrent, as Start's are.
	StartOver(ctx context.Context, gpu *gpulet.GPUPlan, let gpulet.GPULet, over []H) (H, error)
}

// Serving is one gpu-let that runs now: where, what for and its handle.
type Serving[H comparable] struct {
	GPU string
	// Let is the plan's gpu-let it runs (for a running one, the models it
	// serves now with the plan's batches and rates).
	Let gpulet.GPULet
	H   H
}

// ModelsNotLoaded is Node.Start's error for a gpu-let that started without
// some of its models: one that does not load (a file the engine refuses,
// memory the device lacks) does not keep its neighbours from serving.
type ModelsNotLoaded struct {
	// Errs says why each model did not load.
	Errs map[string]error
}

func (e *ModelsNotLoaded) Error() string {
	names := slices.Sorted(maps.Keys(e.Errs))
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, n+": "+e.Errs[n].Error())
	}
	return "models not loaded: " + strings.Join(parts, "; ")
}

// Failure is a gpu-let that did not start, or a model that did not load on
// a gpu-let that runs (Model set).
type Failure struct {
	GPU   string
	Let   gpulet.GPULet
	Model string
	Err   error
}

// Outcome is what Reorganize did.
type Outcome[H comparable] struct {
	// Diff is the plan diff it carried out.
	Diff gpulet.PlanDiff
	// Started, Loaded and Stopped count new gpu-lets, models loaded on kept
	// ones and gpu-lets drained.
	Started, Loaded, Stopped int
	// Deferred counts gpu-lets that did not fit beside the old ones and
	// started once those had drained; Bridged the old gpu-lets that kept
	// serving models only a deferred gpu-let would serve, or one that had
	// not loaded, while the others drained, and drained last; Overlapped
	// the gpu-lets that did not fit beside the old ones and started over
	// them (Overlapper), counted in Started too; Reloaded the models a new
	// or kept gpu-let loaded once old ones had drained, counted in Loaded
	// too.
	Deferred, Bridged, Overlapped, Reloaded int
	// Failed lists what could not start or load.
	Failed []Failure
	// Serving is what the router points at now.
	Serving []Serving[H]
}

// Changed says whether the node runs other than before: a gpu-let started
// (at once or deferred) or stopped, a model loaded or unloaded. The daemon
// and the simulator count such an outcome as a reorganization.
func (o *Outcome[H]) Changed() bool {
	return o.Started+o.Deferred > 0 || o.Stopped > 0 || o.Loaded > 0 ||
		slices.ContainsFunc(o.Diff.Changes, func(c gpulet.Change) bool { return len(c.Unload) > 0 })
}

// Ready says whether the plan serves with no new executor or model: the
// routes could switch at once.
func (o *Outcome[H]) Ready() bool { return o.Started == 0 && o.Loaded == 0 && o.Deferred == 0 }

// Reorganize makes node run plan, given what runs (running, each with the
// plan gpu-let it was started or last retuned for). It follows
// gpulet.Diff(what runs, plan): it starts the new gpu-lets beside the old
// ones (concurrently), loads what kept gpu-lets gain and retunes them,
// switches the routes at once, then drains and stops the old gpu-lets
// (concurrently) and unloads what kept ones lost. A gpu-let that fails to
// start while old ones are to stop is taken to lack room (cores, memory,
// MIG instances): it starts again after they have drained, and the routes
// switch again; the old gpu-lets that serve models only it would serve
// stay routed and drain last, after it was tried again beside them
// (splitBridges). When every old gpu-let it waits for is such a bridge, or
// when the others' room did not suffice, a node that can (Overlapper)
// starts it over them instead, routed before they drain. A model that a
// new or kept gpu-let did not load while old ones ran (ModelsNotLoaded,
// Load's error: perhaps memory they hold) is loaded again once they have
// drained, and the old gpu-lets that serve it stay routed as bridges while
// the others drain, in the same way. The error joins every start and load
// failure (also listed in Outcome.Failed); the node serves what did start.
func Reorganize[H comparable](ctx context.Context, node Node[H], running []Serving[H], plan *gpulet.Plan) (Outcome[H], error) {
	old, handles := runningPlan(running)
	out := Outcome[H]{Diff: gpulet.Diff(old, plan)}
	concurrently := concurrently
	if s, ok := node.(Serial); ok && s.Serial() {
		concurrently = inOrder
	}
	gpus := map[string]*gpulet.GPUPlan{}
	for i := range plan.GPUs {
		gpus[plan.GPUs[i].ID] = &plan.GPUs[i]
	}
	var starts, kept []*slot[H]
	var stops []Serving[H] // what runs now on each gpu-let to stop
	var lost []func()
	for _, c := range out.Diff.Changes {
		switch c.Action {
		case gpulet.ActionStart, gpulet.ActionResize:
			starts = append(starts, &slot[H]{gpu: gpus[c.GPU], let: *c.New, planned: *c.New})
		case gpulet.ActionKeep:
			s := &slot[H]{gpu: gpus[c.GPU], let: *c.New, planned: *c.New, h: handles[c.GPU][c.OldIndex], ok: true, change: c}
			kept = append(kept, s)
			for _, name := range c.Unload {
				lost = append(lost, func() { node.Unload(ctx, s.h, name) })
			}
		}
		if c.Action == gpulet.ActionStop || c.Action == gpulet.ActionResize {
			stops = append(stops, Serving[H]{GPU: c.GPU, Let: *c.Old, H: handles[c.GPU][c.OldIndex]})
		}
	}
	// started is called, one at a time, with each slot start has started
	// (or failed to).
	var started func(s *slot[H])
	start := func(ss []*slot[H], startOne func(s *slot[H]) (H, error)) {
		var mu sync.Mutex
		concurrently(len(ss), func(i int) {
			s := ss[i]
			h, err := startOne(s)
			mu.Lock()
			defer mu.Unlock()
			s.h, s.err = h, err
			var partial *ModelsNotLoaded
			if errors.As(s.err, &partial) {
				s.missing, s.err = partial.Errs, nil
				s.let.Models = slices.DeleteFunc(slices.Clone(s.planned.Models), func(p gpulet.Placement) bool { return s.missing[p.Name] != nil })
			}
			s.ok = s.err == nil
			if started != nil {
				started(s)
			}
		})
	}
	// notLoaded records the models a started gpu-let lacks as failures.
	notLoaded := func(s *slot[H]) {
		for _, p := range s.planned.Models {
			if err := s.missing[p.Name]; err != nil {
				out.Failed = append(out.Failed, Failure{GPU: s.gpu.ID, Let: s.planned, Model: p.Name, Err: err})
			}
		}
		s.missing = nil
	}
	startPlanned := func(s *slot[H]) (H, error) { return node.Start(ctx, s.gpu, s.planned) }
	start(starts, startPlanned)
	var later, reload []*slot[H]
	// startedNow sorts the slots that started beside the old ones.
	startedNow := func(s *slot[H]) {
		out.Started++
		if len(s.missing) > 0 && len(stops) > 0 {
			reload = append(reload, s) // perhaps memory the old ones hold
		} else {
			notLoaded(s)
		}
	}
	for _, s := range starts {
		switch {
		case s.ok:
			startedNow(s)
		case len(stops) > 0:
			later = append(later, s)
		default:
			out.Failed = append(out.Failed, Failure{GPU: s.gpu.ID, Let: s.let, Err: s.err})
		}
	}
	for _, s := range kept {
		if s.change.Retune {
			node.Retune(ctx, s.h, s.gpu, s.let)
		}
		for _, name := range s.change.Load {
			if err := node.Load(ctx, s.h, s.gpu, s.let, s.let.Placement(name)); err != nil {
				s.let.Models = slices.DeleteFunc(slices.Clone(s.let.Models), func(p gpulet.Placement) bool { return p.Name == name })
				if len(stops) > 0 { // perhaps memory the old ones hold
					if s.missing == nil {
						s.missing = map[string]error{}
						reload = append(reload, s)
					}
					s.missing[name] = err
					continue
				}
				out.Failed = append(out.Failed, Failure{GPU: s.gpu.ID, Let: s.let, Model: name, Err: err})
				continue
			}
			out.Loaded++
		}
	}
	all := append(starts, kept...)
	// bridges are old gpu-lets to stop that stay routed while the other
	// old ones drain and the deferred gpu-lets start again, since they
	// serve models only a deferred gpu-let would serve (splitBridges):
	// those models are not left unrouted for that start when draining the
	// others makes the room.
	var bridges []Serving[H]
	route := func() {
		out.Serving = nil
		for _, s := range all {
			if s.ok {
				out.Serving = append(out.Serving, Serving[H]{GPU: s.gpu.ID, Let: s.let, H: s.h})
			}
		}
		node.Route(append(slices.Clone(out.Serving), bridges...))
	}
	stop := func(ss []Serving[H]) {
		concurrently(len(ss), func(i int) { node.Stop(ctx, ss[i].H) })
	}
	// startLater starts the deferred gpu-lets, each routed as soon as it
	// has started, not once the slowest of them has (a model whose warm-up
	// takes seconds kept its neighbours' new gpu-let off the routes that
	// long, while the old gpu-lets had already drained); it returns those
	// that still failed.
	startLater := func(ss []*slot[H]) []*slot[H] {
		started = func(s *slot[H]) {
			if s.ok {
				route()
			}
		}
		start(ss, startPlanned)
		started = nil
		var failed []*slot[H]
		for _, s := range ss {
			if s.ok {
				out.Deferred++
				notLoaded(s)
				continue
			}
			failed = append(failed, s)
		}
		return failed
	}
	// startOver starts each deferred gpu-let of ss over the old gpu-lets
	// of over on its GPU, when the node can (Overlapper) and there are
	// some, and returns those that still did not start.
	startOver := func(ss []*slot[H], over []Serving[H]) []*slot[H] {
		ov, ok := node.(Overlapper[H])
		if !ok {
			return ss
		}
		var can, cannot []*slot[H]
		for _, s := range ss {
			if len(onGPU(over, s.gpu.ID)) > 0 {
				can = append(can, s)
			} else {
				cannot = append(cannot, s)
			}
		}
		start(can, func(s *slot[H]) (H, error) { return ov.StartOver(ctx, s.gpu, s.planned, onGPU(over, s.gpu.ID)) })
		for _, s := range can {
			if !s.ok {
				cannot = append(cannot, s)
				continue
			}
			out.Overlapped++
			startedNow(s)
		}
		return cannot
	}
	var first []Serving[H] // the gpu-lets to stop before the deferred start
	if first, bridges = splitBridges(stops, later, reload, all); len(first) == 0 && len(later) > 0 {
		// Every old gpu-let serves a model only a deferred one would:
		// start those over the old ones' room rather than leave the
		// models unrouted while the old drain.
		later = startOver(later, stops)
		first, bridges = splitBridges(stops, later, reload, all)
	}
	if len(first) == 0 {
		first, bridges = stops, nil // nothing would make room: drain them all
	}
	route()
	stop(first)
	out.Stopped = len(stops)
	concurrently(len(lost), func(i int) { lost[i]() })
	// loadMissing loads again what the gpu-lets of reload lack; it is
	// tried once the first old gpu-lets have drained and, for what still
	// does not load, once the bridges have too.
	loadMissing := func() (loaded bool) {
		for _, s := range reload {
			for _, p := range s.planned.Models {
				if s.missing[p.Name] == nil {
					continue
				}
				if err := node.Load(ctx, s.h, s.gpu, s.planned, p); err != nil {
					s.missing[p.Name] = err
					continue
				}
				delete(s.missing, p.Name)
				s.let.Models = append(s.let.Models, p)
				out.Loaded++
				out.Reloaded++
				loaded = true
			}
		}
		return loaded
	}
	if len(bridges) > 0 {
		out.Bridged = len(bridges)
		// What the others' room did not let start starts over the
		// bridges, or after them; what it did not let load is tried
		// again before they drain.
		later = startOver(startLater(later), bridges)
		loadMissing()
		last := bridges
		bridges = nil
		route()
		stop(last)
	}
	reloaded := loadMissing()
	for _, s := range reload {
		notLoaded(s)
	}
	for _, s := range startLater(later) {
		out.Failed = append(out.Failed, Failure{GPU: s.gpu.ID, Let: s.let, Err: s.err})
	}
	if reloaded {
		route() // the deferred gpu-lets routed themselves as they started
	}
	var errs []error
	for _, f := range out.Failed {
		errs = append(errs, f.Err)
	}
	return out, errors.Join(errs...)
}

// slot is one gpu-let of the plan as Reorganize carries it out.
type slot[H comparable] struct {
	gpu *gpulet.GPUPlan
	let gpulet.GPULet // what it serves: the plan's, less what did not load
	h   H
	ok  bool
	err error
	// planned is the plan's gpu-let, and missing its models that did
	// not load when it started (ModelsNotLoaded).
	planned gpulet.GPULet
	missing map[string]error
	// change is a kept gpu-let's change.
	change gpulet.Change
}

// splitBridges splits the gpu-lets to stop into those to drain first and
// the bridges: gpu-lets serving a model that only a deferred gpu-let
// (later) would serve, or a model a started or kept gpu-let lacks until it
// loads again (reload), no gpu-let that runs (all, those that started or
// are kept) serving it. Draining the others first may make the room
// (cores, memory) those gpu-lets lack while the bridges keep the models
// routed.
func splitBridges[H comparable](stops []Serving[H], later, reload, all []*slot[H]) (first, bridges []Serving[H]) {
	served, wanted := map[string]bool{}, map[string]bool{}
	for _, s := range all {
		if s.ok {
			for _, p := range s.let.Models {
				served[p.Name] = true
			}
		}
	}
	for _, s := range later {
		for _, p := range s.planned.Models {
			wanted[p.Name] = !served[p.Name]
		}
	}
	for _, s := range reload {
		for name := range s.missing {
			wanted[name] = !served[name]
		}
	}
	for _, st := range stops {
		if slices.ContainsFunc(st.Let.Models, func(p gpulet.Placement) bool { return wanted[p.Name] }) {
			bridges = append(bridges, st)
		} else {
			first = append(first, st)
		}
	}
	return first, bridges
}

// onGPU lists the handles of the gpu-lets of ss on the GPU gpu.
func onGPU[H comparable](ss []Serving[H], gpu string) []H {
	var out []H
	for _, s := range ss {
		if s.GPU == gpu {
			out = append(out, s.H)
		}
	}
	return out
}

// Changes is what Reorganize would do to move what runs to plan: the
// gpulet.Diff from what runs, in the order Reorganize applies it.
func Changes[H comparable](running []Serving[H], plan *gpulet.Plan) gpulet.PlanDiff {
	old, _ := runningPlan(running)
	return gpulet.Diff(old, plan)
}

// Crowded is gpulet.Crowded from what runs: the GPUs where Reorganize
// would likely start and load plan's gpu-lets only once the old ones have
// drained, for want of room beside them.
func Crowded[H comparable](running []Serving[H], plan *gpulet.Plan, gpus []gpulet.GPU) []string {
	old, _ := runningPlan(running)
	return gpulet.Crowded(old, plan, gpus)
}

// runningPlan is what runs as a plan for gpulet.Diff, and each GPU's
// handles in the order of its gpu-lets there.
func runningPlan[H comparable](running []Serving[H]) (*gpulet.Plan, map[string][]H) {
	p := &gpulet.Plan{}
	handles := map[string][]H{}
	at := map[string]int{}
	for _, r := range running {
		i, ok := at[r.GPU]
		if !ok {
			i = len(p.GPUs)
			at[r.GPU] = i
			p.GPUs = append(p.GPUs, gpulet.GPUPlan{ID: r.GPU})
		}
		p.GPUs[i].GPULets = append(p.GPUs[i].GPULets, r.Let)
		handles[r.GPU] = append(handles[r.GPU], r.H)
	}
	return p, handles
}

// concurrently runs f(0..n-1) on n goroutines and waits for them.
func concurrently(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i)
		}()
	}
	wg.Wait()
}

// inOrder runs f(0..n-1) one after the other.
func inOrder(n int, f func(i int)) {
	for i := range n {
		f(i)
	}
}
