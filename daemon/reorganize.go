package daemon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/gpulet/gpuletd/control"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/internal/ctxsleep"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// executors is the control.Node the daemon reorganizes: its supervisor's
// executor processes and its router, for one plan.
type executors struct {
	n      *node
	plan   *gpulet.Plan
	reason string
	rates  map[string]float64
}

var (
	_ control.Node[*gpuletRun]       = executors{}
	_ control.Overlapper[*gpuletRun] = executors{}
)

// Start starts the executor of a new gpu-let with its models; one the
// executor refuses to load leaves the others serving
// (control.ModelsNotLoaded).
func (x executors) Start(ctx context.Context, gp *gpulet.GPUPlan, let gpulet.GPULet) (*gpuletRun, error) {
	dev, err := x.n.devices.Inventory().Device(gp.ID)
	if err != nil {
		return nil, fmt.Errorf("apply plan: %w", err)
	}
	return x.start(ctx, &want{device: dev, let: let, gpu: gp})
}

// start starts the executor of w as Start does.
func (x executors) start(ctx context.Context, w *want) (*gpuletRun, error) {
	g, err := x.n.startGpulet(ctx, w)
	var notLoaded *control.ModelsNotLoaded
	if err != nil && !errors.As(err, &notLoaded) {
		return nil, err
	}
	g.setPlanned(w.let) // plannedNow leaves out what did not load
	return g, err
}

// errNoOverlap: a gpu-let cannot start over old ones on this kind of
// device.
var errNoOverlap = errors.New("only a CPU gpu-let starts on cores that old ones hold")

// startsOver says whether a gpu-let on d may start on room that old
// gpu-lets hold (StartOver): CPU cores alone can be shared so.
func startsOver(d mps.Device) bool { return d.Kind == mps.KindCPU }

// StartOver starts, on a CPU device, a new gpu-let that took too many
// cores to start beside the old ones over (the old gpu-lets on its
// device that the plan drops): it takes cores they hold, shares them
// while they drain and keeps them once they stop. On a GPU the room is
// memory or a MIG instance, which two executors cannot share: it starts
// nothing (errNoOverlap), and the gpu-let starts after the old drained.
func (x executors) StartOver(ctx context.Context, gp *gpulet.GPUPlan, let gpulet.GPULet, over []*gpuletRun) (*gpuletRun, error) {
	dev, err := x.n.devices.Inventory().Device(gp.ID)
	if err != nil {
		return nil, fmt.Errorf("apply plan: %w", err)
	}
	if !startsOver(dev) {
		return nil, fmt.Errorf("start gpu-let on %s over old ones: %w", gp.ID, errNoOverlap)
	}
	w := &want{device: dev, let: let, gpu: gp}
	for _, g := range over {
		w.takeOver = append(w.takeOver, g.id)
	}
	return x.start(ctx, w)
}

// Load loads a model a kept gpu-let gains.
func (x executors) Load(ctx context.Context, g *gpuletRun, gp *gpulet.GPUPlan, let gpulet.GPULet, p gpulet.Placement) error {
	req, err := x.n.loadRequest(&want{device: g.device, let: let, gpu: gp}, p)
	if err == nil {
		err = g.loadModel(ctx, req)
	}
	if err != nil {
		return err
	}
	g.plannedAdd(p)
	return nil
}

// Retune reloads, on a kept gpu-let, each model whose load the plan or the
// catalog changes: its batch cap or interference factor, its configuration
// (SLO, largest batch, queue bound), its profile (measured again), its file
// (loaded again with other contents). The executor swaps the new load in
// while the old one serves, and keeps the engine unless the file or the
// engine's settings change. Rates alone only change the routes' weights. A
// model that fails to reload keeps serving as it was, which is logged.
func (x executors) Retune(ctx context.Context, g *gpuletRun, gp *gpulet.GPUPlan, let gpulet.GPULet) {
	w := &want{device: g.device, let: let, gpu: gp}
	for _, p := range let.Models {
		g.mu.Lock()
		have := g.models[p.Name]
		g.mu.Unlock()
		if have == nil {
			continue // gained: Load loads it
		}
		req, err := x.n.loadRequest(w, p)
		if err == nil && sameLoad(req, have) {
			continue
		}
		if err == nil {
			err = g.loadModel(ctx, req)
		}
		x.n.retuned(g, p.Name, err)
	}
	g.retunePlanned(let)
}

// retuned reports a reload of model on g that failed: in the log each time,
// and in an event when it fails otherwise than last time (a new file the
// engine cannot load would otherwise fail silently at every plan while the
// old one serves on).
func (n *node) retuned(g *gpuletRun, model string, err error) {
	key := g.id + "/" + model
	if err == nil {
		n.retuneFailed.Delete(key)
		return
	}
	n.log.Warn("retune model: it keeps serving as it was loaded", zap.String("model", model), zap.String("gpulet", g.id), zap.Error(err))
	if last, ok := n.retuneFailed.Swap(key, err.Error()); !ok || last != err.Error() {
		n.events.add(EventModelLoad, store.SeverityWarning, fmt.Sprintf("reloading %s on %s failed; it keeps serving as it was loaded: %v", model, g.id, err),
			map[string]string{"model": model, "gpulet": g.id})
	}
}

// sameLoad tells whether two loads of a model ask the executor for the same
// thing. The batch sizes to warm up are left out: they follow the plan's
// batch, which moves with the rates, and a size warmed once stays warm.
func sameLoad(a, b *pb.LoadModelRequest) bool {
	if len(a.WarmupBatches) == 0 && len(b.WarmupBatches) == 0 {
		return proto.Equal(a, b)
	}
	a, b = proto.Clone(a).(*pb.LoadModelRequest), proto.Clone(b).(*pb.LoadModelRequest)
	a.WarmupBatches, b.WarmupBatches = nil, nil
	return proto.Equal(a, b)
}

// Route points the router at the serving gpu-lets; the plan is the node's
// from then on.
func (x executors) Route(serving []control.Serving[*gpuletRun]) {
	x.n.installRoutes(serving)
	x.n.setAdmission(x.plan)
	x.n.current.Store(&planned{plan: x.plan, at: time.Now(), reason: x.reason, rates: x.rates})
}

// Stop drains and stops a gpu-let the plan drops.
func (x executors) Stop(ctx context.Context, g *gpuletRun) {
	if err := x.n.sup.retire(ctx, g); err != nil {
		x.n.log.Warn("retire gpu-let", zap.String("gpulet", g.id), zap.Error(err))
	}
}

// Unload takes a model a kept gpu-let lost off it once its requests there
// have had time to finish (drainWait).
func (x executors) Unload(ctx context.Context, g *gpuletRun, name string) {
	g.plannedDrop(name)
	_ = ctxsleep.Sleep(ctx, x.n.catalog.drainWait(name)) // unload either way
	// Its counts there go with it: the requests that failed there are said
	// now, as a retired gpu-let's stop event says them.
	if c := g.served()[name]; c.failed > 0 {
		x.n.events.add(EventReorganize, store.SeverityInfo, fmt.Sprintf("%s unloaded from %s, which the plan keeps", name, g.id)+
			failedThere(map[string]servedOn{name: c}), map[string]string{"model": name, "gpulet": g.id})
	}
	if err := g.unloadModel(ctx, name); err != nil {
		x.n.log.Warn("unload model", zap.String("model", name), zap.String("gpulet", g.id), zap.Error(err))
	}
}

// modelsLost follows a gpu-let whose executor restarted without some of its
// models: the routes are rebuilt from what runs, so they are not sent there,
// and a model served nowhere else says why. The next re-plan loads them
// again where its plan puts them (a kept gpu-let's Load).
func (n *node) modelsLost(g *gpuletRun, errs map[string]error) {
	n.installRoutes(n.running())
	n.sayWhyNotServed(slices.Collect(maps.Keys(errs)), func(name string) string {
		return fmt.Sprintf("its executor on %s restarted without it: %v", g.id, errs[name])
	})
}

// restartTried follows the restarts of g's dead executor. While it does
// not start, each of its models served nowhere else says why (instead of
// waiting for it: the node's readiness does not wait for a model with a
// reason, so a load balancer keeps the node for the models that serve);
// once it serves again the reasons go.
func (n *node) restartTried(g *gpuletRun, err error) {
	if err == nil {
		n.markServing()
		return
	}
	n.sayWhyNotServed(g.modelNames(), func(string) string {
		return fmt.Sprintf("its executor on %s died and does not start again (tried again with backoff): %v", g.id, err)
	})
}

// sayWhyNotServed gives each of models that no gpu-let serves now the
// reason why(model).
func (n *node) sayWhyNotServed(models []string, why func(model string) string) {
	routed := n.router.models()
	for _, name := range models {
		if !n.readyIn(name, routed) {
			n.unserved.set(name, why(name))
		}
	}
}

// running lists the node's serving gpu-lets with the plan gpu-let each
// runs, for control.Reorganize: those whose executors answer first, then
// by id. A plan's gpu-let keeps the first running one that matches it
// (gpulet.Diff), so that a plan with one gpu-let fewer of a shape keeps the
// one that serves and stops the one whose executor is restarting, silent,
// or holding a request unanswered well past its deadline (a run that may
// never end), rather than whichever came first.
func (n *node) running() []control.Serving[*gpuletRun] {
	var out []control.Serving[*gpuletRun]
	for _, g := range n.sup.list() {
		if g.draining.Load() {
			continue
		}
		out = append(out, control.Serving[*gpuletRun]{GPU: g.device.ID, Let: g.plannedNow(), H: g})
	}
	now := time.Now()
	unwell := make(map[*gpuletRun]bool, len(out)) // once each: hangs reads running files
	for _, s := range out {
		g := s.H
		unwell[g] = g.down.Load() || g.stalled() || n.crashes.hangs(executorGen{g.id, g.gen.Load()}, now)
	}
	slices.SortFunc(out, func(a, b control.Serving[*gpuletRun]) int {
		if ua, ub := unwell[a.H], unwell[b.H]; ua != ub {
			if ua {
				return 1
			}
			return -1
		}
		return strings.Compare(a.H.id, b.H.id)
	})
	return out
}

// apply makes the node run plan through control.Reorganize: it keeps the
// gpu-lets that stay, starts the new ones beside the old, switches the
// router atomically, then drains and stops the old ones. When a device
// cannot hold old and new at once (cores, memory or MIG instances), the
// new ones there start after the old have drained, which is logged.
func (n *node) apply(ctx context.Context, plan *gpulet.Plan, reason string, rates map[string]float64) error {
	n.moving.Store(n.servedAndPlaced(plan))
	defer n.moving.Store(nil)
	out, err := control.Reorganize(ctx, executors{n: n, plan: plan, reason: reason, rates: rates}, n.running(), plan)
	n.syncLoads(ctx, plan)
	n.recordOutcome(out, plan, reason)
	n.markServing()
	return err
}

// servedAndPlaced is the models that serve now and that plan places: a
// reorganization that leaves one unrouted for a while (its new gpu-let
// starts once the old ones drained) has it on its way back, not on its way
// for the first time (comingBack).
func (n *node) servedAndPlaced(plan *gpulet.Plan) *map[string]bool {
	routed := n.router.models()
	out := map[string]bool{}
	for _, gp := range plan.GPUs {
		for _, l := range gp.GPULets {
			for _, p := range l.Models {
				if n.readyIn(p.Name, routed) {
					out[p.Name] = true
				}
			}
		}
	}
	return &out
}

// recordOutcome says what a reorganization did and why models it could not
// start or load are not served (status, events, the reorganizations metric).
func (n *node) recordOutcome(out control.Outcome[*gpuletRun], plan *gpulet.Plan, reason string) {
	for _, f := range out.Failed {
		if f.Model != "" {
			n.unserved.set(f.Model, fmt.Sprintf("loading it on %s failed: %v", f.GPU, f.Err))
			continue
		}
		for _, pl := range f.Let.Models {
			n.unserved.set(pl.Name, fmt.Sprintf("its gpu-let on %s did not start: %v", f.GPU, f.Err))
		}
	}
	if out.Deferred > 0 {
		msg := fmt.Sprintf("%d gpu-let(s) did not fit beside the old ones (cores or memory): old gpu-lets were drained first", out.Deferred)
		if out.Bridged > 0 {
			msg += fmt.Sprintf(", %d of them last, serving the models that moved until then", out.Bridged)
		}
		n.events.add(EventReorganize, store.SeverityWarning, msg, nil)
	}
	if out.Reloaded > 0 {
		msg := fmt.Sprintf("%d model(s) did not load on their gpu-let while old gpu-lets ran (memory they held): loaded once those had drained", out.Reloaded)
		if out.Deferred == 0 && out.Bridged > 0 {
			msg += fmt.Sprintf(", %d old gpu-let(s) serving them until then", out.Bridged)
		}
		n.events.add(EventReorganize, store.SeverityInfo, msg, nil)
	}
	if out.Overlapped > 0 {
		n.events.add(EventReorganize, store.SeverityInfo, fmt.Sprintf("%d gpu-let(s) did not fit beside the old ones: each started on cores the old ones held, shared until they had drained, so the models that moved stayed served", out.Overlapped), nil)
	}
	n.gpuletStarts.add(out)
	started := out.Started + out.Deferred
	if out.Changed() {
		n.events.add(EventReorganize, store.SeverityInfo, "plan applied: "+plan.Layout(), map[string]string{
			"reason": reason, "started": strconv.Itoa(started), "retired": strconv.Itoa(out.Stopped),
			"loaded": strconv.Itoa(out.Loaded),
		})
		if reason != planAtStart { // as the simulator counts: changes after the first plan
			n.reorganizations.Add(1)
		}
	}
}

// setPlanned records the plan gpu-let g was started for.
func (g *gpuletRun) setPlanned(let gpulet.GPULet) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.planned = let
	g.planned.Models = slices.Clone(let.Models)
}

// retunePlanned takes the plan's gpu-let (its duty cycle, which the batch
// caps follow) and its batches and rates for the models g keeps.
func (g *gpuletRun) retunePlanned(let gpulet.GPULet) {
	g.mu.Lock()
	defer g.mu.Unlock()
	kept := g.planned.Models
	g.planned = let
	g.planned.Models = kept
	for i, p := range g.planned.Models {
		for _, q := range let.Models {
			if q.Name == p.Name {
				g.planned.Models[i] = q
			}
		}
	}
}

// plannedAdd records a model g gained, or one it was started for that
// loads only now.
func (g *gpuletRun) plannedAdd(p gpulet.Placement) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := slices.IndexFunc(g.planned.Models, func(q gpulet.Placement) bool { return q.Name == p.Name }); i >= 0 {
		g.planned.Models[i] = p
		return
	}
	g.planned.Models = append(g.planned.Models, p)
}

// plannedDrop records a model g lost.
func (g *gpuletRun) plannedDrop(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.planned.Models = slices.DeleteFunc(g.planned.Models, func(p gpulet.Placement) bool { return p.Name == name })
}

// plannedNow is the plan gpu-let g runs, with the models loaded on it.
func (g *gpuletRun) plannedNow() gpulet.GPULet {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.planned
	l.Models = nil
	for _, p := range g.planned.Models {
		if g.models[p.Name] != nil {
			l.Models = append(l.Models, p)
		}
	}
	return l
}
