package daemon

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpulet/gpuletd/control"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/interference"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// Planning constants.
const (
	// minPlanRate is the rate a model with no traffic yet is planned for,
	// so that every model has a gpu-let before its first request.
	minPlanRate = 1.0
	// planHeadroom is the extra rate planned over the estimate, so that a
	// model's rate may grow a little before the next period.
	planHeadroom = 0.2
	// cpuMemoryMB stands for the memory of the CPU device (models live in
	// host memory; the planner only needs a bound).
	cpuMemoryMB = 1 << 20
)

// planned is what the node runs: the last applied plan and the
// placements it produced.
type planned struct {
	plan   *gpulet.Plan
	at     time.Time
	reason string
	rates  map[string]float64
}

// gpuOf describes a device for the planner.
func gpuOf(d mps.Device) gpulet.GPU {
	g := gpulet.GPU{ID: d.ID, Type: d.Type, Sizes: slices.Clone(d.Sizes), MaxGPULets: d.MaxGpulets}
	switch d.Backend {
	case mps.BackendMIG:
		g.Backend = gpulet.BackendMIG
	case mps.BackendNone:
		g.Backend = gpulet.BackendNone
	default:
		g.Backend = gpulet.BackendMPS
	}
	g.MemoryMB = float64(d.MemoryTotal) / (1 << 20)
	if d.Kind == mps.KindCPU || g.MemoryMB == 0 {
		g.MemoryMB = cpuMemoryMB
	}
	return g
}

// planInput builds the planner's input: every healthy device, every served
// model with its profiles and planned rate. Models without any profile are
// returned apart with the reason.
func (n *node) planInput(ctx context.Context, rates map[string]float64) (gpulet.Input, map[string]string) {
	var in gpulet.Input
	devs := n.devices.Inventory().Devices
	types := map[string]mps.Device{}
	for _, d := range devs {
		if d.Health == mps.HealthFailed {
			continue
		}
		in.GPUs = append(in.GPUs, gpuOf(d))
		if _, ok := types[d.Type]; !ok {
			types[d.Type] = d
		}
	}
	typeNames := make([]string, 0, len(types))
	for t := range types {
		typeNames = append(typeNames, t)
	}
	sort.Strings(typeNames)
	missing := map[string]string{}
	for _, m := range n.catalog.all() {
		var profs []*gpulet.Profile
		var why []string
		for _, t := range typeNames {
			p, err := n.book.profile(ctx, m, types[t])
			if err != nil {
				why = append(why, err.Error())
				continue
			}
			profs = append(profs, p)
		}
		if len(profs) == 0 {
			missing[m.Name] = strings.Join(why, "; ")
			continue
		}
		rate := max(rates[m.Name], minPlanRate) * (1 + planHeadroom)
		in.Demands = append(in.Demands, gpulet.Demand{
			Name: m.Name, Profile: profs[0], More: profs[1:],
			SLOMS: float64(m.Config.SLO.D().Microseconds()) / 1000, Rate: rate,
		})
	}
	return in, missing
}

// predictor chooses the interference model for the node: the first device
// type that has one (co-location slowdowns are measured per device type).
type predictor struct{ m *interference.Model }

func (p predictor) Predict(s interference.Sample) float64 { return p.m.Predict(s) }

func (n *node) predictor() gpulet.Predictor {
	for _, d := range n.devices.Inventory().Devices {
		m, err := n.book.interferenceModel(d)
		if err == nil && m != nil {
			return predictor{m}
		}
	}
	return nil
}

// replan plans the node for the given rates and applies the plan when it
// changes what runs where.
func (n *node) replan(ctx context.Context, reason string, rates map[string]float64) error {
	n.planMu.Lock()
	defer n.planMu.Unlock()
	in, missing := n.planInput(ctx, rates)
	for name, why := range missing {
		n.events.add(EventPlan, store.SeverityWarning, "model cannot be placed: "+why, map[string]string{"model": name})
		if n.unserved.reason(name) == "" {
			n.unserved.set(name, "it cannot be placed: "+why)
		}
	}
	var plan *gpulet.Plan
	if len(in.GPUs) == 0 {
		for _, m := range n.catalog.all() {
			n.unserved.set(m.Name, "no healthy device to place it on")
		}
		return errors.New("plan: no healthy device")
	}
	algo := gpulet.Algo(n.conf().Scheduler.Algorithm)
	opts := gpulet.Options{}
	if algo != gpulet.AlgoGpulet && algo != gpulet.AlgoSBP {
		opts.Interference = n.predictor()
	}
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	plan, err := gpulet.Run(pctx, algo, in, opts)
	if err != nil {
		return fmt.Errorf("plan with %s: %w", algo, err)
	}
	assigned := plan.Assigned()
	for name, rate := range plan.Unscheduled {
		n.events.add(EventPlan, store.SeverityWarning, fmt.Sprintf("%.1f req/s of %s cannot be placed: %s", rate, name, plan.Reasons[name]),
			map[string]string{"model": name})
		if assigned[name] == 0 {
			n.unserved.set(name, "the plan cannot place it: "+plan.Reasons[name])
		}
	}
	if _, err := n.st.SavePlan(ctx, store.PlanRecord{Algorithm: string(algo), Reason: reason, Plan: mustJSON(plan), Schedulable: plan.Schedulable}); err != nil {
		n.log.Warn("save plan", zap.Error(err))
	}
	return n.apply(ctx, plan, reason, rates)
}

// layoutKey says what runs where, ignoring rates: plans with the same key
// need no executor to start or stop.
func layoutKey(p *gpulet.Plan) string {
	var b strings.Builder
	for _, g := range p.GPUs {
		fmt.Fprintf(&b, "%s:", g.ID)
		lets := make([]string, 0, len(g.GPULets))
		for _, l := range g.GPULets {
			names := make([]string, 0, len(l.Models))
			for _, m := range l.Models {
				names = append(names, m.Name)
			}
			sort.Strings(names)
			lets = append(lets, fmt.Sprintf("%d[%s]", l.Size, strings.Join(names, ",")))
		}
		sort.Strings(lets)
		b.WriteString(strings.Join(lets, ";"))
		b.WriteString("|")
	}
	return b.String()
}

// want is one gpu-let a plan asks for, matched to a running one or not.
type want struct {
	device mps.Device
	let    gpulet.GPULet
	gpu    *gpulet.GPUPlan // the plan of its GPU
	run    *gpuletRun      // kept or started
}

// apply makes the node run plan: it keeps the gpu-lets that stay, starts
// the new ones beside the old, switches the router atomically, then drains
// and stops the old ones. When a device cannot hold old and new at once
// (cores or memory), the old ones there are drained first, which is logged.
func (n *node) apply(ctx context.Context, plan *gpulet.Plan, reason string, rates map[string]float64) error {
	prev := n.current.Load()
	sameLayout := prev != nil && layoutKey(prev.plan) == layoutKey(plan)
	inv := n.devices.Inventory()
	running := map[string][]*gpuletRun{}
	for _, g := range n.sup.list() {
		running[g.device.ID] = append(running[g.device.ID], g)
	}

	var wants []*want
	var retire []*gpuletRun
	for _, gp := range plan.GPUs {
		dev, err := inv.Device(gp.ID)
		if err != nil {
			return fmt.Errorf("apply plan: %w", err)
		}
		pool := running[gp.ID]
		rs := make([]control.Running, len(pool))
		for i, g := range pool {
			rs[i] = control.Running{Size: g.size, Models: g.modelNames()}
		}
		keep, unused := control.Match(rs, gp.GPULets)
		for j, l := range gp.GPULets {
			w := &want{device: dev, let: l, gpu: &gp}
			if keep[j] >= 0 {
				w.run = pool[keep[j]]
			}
			wants = append(wants, w)
		}
		for _, i := range unused {
			retire = append(retire, pool[i])
		}
		delete(running, gp.ID)
	}
	for _, gs := range running { // devices the plan no longer lists
		retire = append(retire, gs...)
	}

	// Start what is new beside what runs; what does not fit waits for the
	// old gpu-lets to drain.
	var deferred []*want
	started := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	var startErrs []error
	for _, w := range wants {
		if w.run != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, err := n.startGpulet(ctx, w)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				w.run = g
				started++
			case len(retire) > 0:
				deferred = append(deferred, w)
				n.log.Info("gpu-let does not fit beside the old ones; it starts after they drain", zap.String("device", w.device.ID), zap.Int("size", w.let.Size), zap.Error(err))
			default:
				startErrs = append(startErrs, err)
				n.gpuletFailed(w, err)
			}
		}()
	}
	wg.Wait()
	// Kept gpu-lets: load the models they gain.
	for _, w := range wants {
		if w.run == nil || !contains(wants, w) {
			continue
		}
		for _, pl := range w.let.Models {
			if slices.Contains(w.run.modelNames(), pl.Name) {
				continue
			}
			req, err := n.loadRequest(w, pl, plan)
			if err == nil {
				err = w.run.loadModel(ctx, req)
			}
			if err != nil {
				startErrs = append(startErrs, err)
				n.unserved.set(pl.Name, fmt.Sprintf("loading it on %s failed: %v", w.device.ID, err))
			}
		}
	}
	n.installRoutes(wants, plan)
	n.current.Store(&planned{plan: plan, at: time.Now(), reason: reason, rates: rates})

	// Retire the old gpu-lets; kept ones drop the models they lost.
	if len(retire) > 0 {
		var rwg sync.WaitGroup
		for _, g := range retire {
			rwg.Add(1)
			go func() {
				defer rwg.Done()
				if err := n.sup.retire(ctx, g); err != nil {
					n.log.Warn("retire gpu-let", zap.String("gpulet", g.id), zap.Error(err))
				}
			}()
		}
		rwg.Wait()
	}
	for _, w := range wants {
		if w.run == nil {
			continue
		}
		keep := map[string]bool{}
		for _, pl := range w.let.Models {
			keep[pl.Name] = true
		}
		for _, name := range w.run.modelNames() {
			if !keep[name] {
				n.drainModelThenUnload(ctx, w.run, name)
			}
		}
	}
	if len(deferred) > 0 {
		n.events.add(EventReorganize, store.SeverityWarning,
			fmt.Sprintf("%d gpu-let(s) did not fit beside the old ones (cores or memory): old gpu-lets were drained first", len(deferred)), nil)
		for _, w := range deferred {
			g, err := n.startGpulet(ctx, w)
			if err != nil {
				startErrs = append(startErrs, err)
				n.gpuletFailed(w, err)
				continue
			}
			w.run = g
			started++
		}
		n.installRoutes(wants, plan)
	}
	n.markServing()
	if !sameLayout {
		n.events.add(EventReorganize, store.SeverityInfo, "plan applied: "+plan.Layout(), map[string]string{
			"reason": reason, "started": strconv.Itoa(started), "retired": strconv.Itoa(len(retire)),
		})
		n.reorganizations.Add(1)
	}
	return errors.Join(startErrs...)
}

// gpuletFailed records, for the models of a gpu-let that did not start,
// why they are not served.
func (n *node) gpuletFailed(w *want, err error) {
	for _, pl := range w.let.Models {
		n.unserved.set(pl.Name, fmt.Sprintf("its gpu-let on %s did not start: %v", w.device.ID, err))
	}
}

func contains(ws []*want, w *want) bool { return slices.Contains(ws, w) }

// startGpulet starts the executor of a wanted gpu-let with its models.
func (n *node) startGpulet(ctx context.Context, w *want) (*gpuletRun, error) {
	var reqs []*pb.LoadModelRequest
	for _, pl := range w.let.Models {
		req, err := n.loadRequest(w, pl, nil)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, req)
	}
	sp := gpuletSpec{device: w.device, size: w.let.Size, memLimitMB: memoryLimitMB(w.device, w.let, w.gpu)}
	if w.device.Backend != mps.BackendMIG {
		return n.sup.start(ctx, sp, reqs)
	}
	// Choosing the instance and leasing it is one step, so that gpu-lets
	// started side by side never pick the same instance.
	n.migMu.Lock()
	uuid, changed, err := chooseMIGInstance(n.devices, w.device, w.let, migLayout(w.gpu),
		migReconfigurable(n.conf().Partitioning.MIGReconfigure, w.device))
	if err != nil {
		n.migMu.Unlock()
		return nil, fmt.Errorf("start gpu-let on %s: %w", w.device.ID, err)
	}
	if changed {
		n.events.add(EventDevices, store.SeverityInfo, fmt.Sprintf("MIG instances of %s laid out as %v", w.device.ID, migLayout(w.gpu)),
			map[string]string{"device": w.device.ID})
	}
	sp.migInstance = uuid
	id := n.sup.newID(w.device, w.let.Size)
	lease, err := n.sup.lease(id, sp)
	n.migMu.Unlock()
	if err != nil {
		return nil, err
	}
	return n.sup.startLeased(ctx, id, sp, lease, reqs)
}

// loadRequest builds what an executor needs to serve a placement: the model
// file, its SLO, ℓ(b) at this size from the profile with the plan's
// interference factor, the batch sizes to warm up and, on emulated devices,
// the physics' own slowdown for what runs beside it.
func (n *node) loadRequest(w *want, pl gpulet.Placement, plan *gpulet.Plan) (*pb.LoadModelRequest, error) {
	m, ok := n.catalog.get(pl.Name)
	if !ok {
		return nil, fmt.Errorf("load %s: %w", pl.Name, errNotServed)
	}
	prof, err := n.book.profile(context.Background(), m, w.device)
	if err != nil {
		return nil, err
	}
	maxB := min(max(m.Config.MaxBatchSize, 1), prof.MaxBatch(w.let.Size))
	if maxB < 1 {
		return nil, fmt.Errorf("load %s: %w at size %d on %s", pl.Name, errNoProfile, w.let.Size, w.device.Type)
	}
	req := &pb.LoadModelRequest{
		Name: m.Name, Version: int32(m.Version), Path: m.File, Platform: m.Platform,
		MaxBatchSize: int32(m.Config.MaxBatchSize), SloUs: m.Config.SLO.D().Microseconds(),
		InterferenceFactor: max(pl.Factor, 1), EmulatedProfile: m.Profile(),
		MaxQueue: int32(n.conf().Limits.MaxQueuedPerModel),
	}
	if m.Config.MaxBatchSize > maxB {
		req.MaxBatchSize = int32(maxB)
	}
	req.BatchCap = int32(control.BatchCap(w.let, pl))
	for b := 1; b <= maxB; b++ {
		ms, ok := prof.Latency(b, w.let.Size)
		if !ok {
			break
		}
		req.Latency = append(req.Latency, &pb.LatencyPoint{Batch: int32(b), Ms: ms})
	}
	warm := []int32{1, int32(min(max(pl.Batch, 1), maxB)), int32(maxB)}
	slices.Sort(warm)
	req.WarmupBatches = slices.Compact(warm)
	for _, t := range m.Inputs {
		req.Inputs = append(req.Inputs, &pb.TensorSpec{Name: t.Name, Datatype: string(t.DataType), Shape: t.Dims})
	}
	for _, t := range m.Outputs {
		req.Outputs = append(req.Outputs, &pb.TensorSpec{Name: t.Name, Datatype: string(t.DataType), Shape: t.Dims})
	}
	if w.device.Kind == mps.KindEmulated {
		req.EmulatedContention = n.contention(w, pl, m, plan)
	}
	return req, nil
}

// contention is the emulated physics' slowdown of a placement next to the
// busiest model of the other gpu-let on its device (1 when alone).
func (n *node) contention(w *want, pl gpulet.Placement, m *repository.Model, plan *gpulet.Plan) float64 {
	if plan == nil {
		if cur := n.current.Load(); cur != nil {
			plan = cur.plan
		}
	}
	ph, err := n.book.physicsOf(w.device.Emulated)
	if err != nil || ph == nil || plan == nil {
		return 1
	}
	for _, g := range plan.GPUs {
		if g.ID != w.device.ID {
			continue
		}
		for _, l := range g.GPULets {
			if l.Size == w.let.Size || len(l.Models) == 0 {
				continue
			}
			other := l.Models[0]
			om, ok := n.catalog.get(other.Name)
			if !ok {
				continue
			}
			co, err := ph.CoLocated(
				refset.Placement{Model: m.Profile(), Batch: max(pl.Batch, 1), Size: w.let.Size},
				refset.Placement{Model: om.Profile(), Batch: max(other.Batch, 1), Size: l.Size})
			if err == nil && co.Factor(0) > 0 && !math.IsInf(co.Factor(0), 0) {
				return co.Factor(0)
			}
		}
	}
	return 1
}

// installRoutes points the router at the wanted gpu-lets with the plan's
// rates as weights.
func (n *node) installRoutes(wants []*want, plan *gpulet.Plan) {
	entries := map[string][]routeEntry{}
	for _, w := range wants {
		if w.run == nil {
			continue
		}
		for _, pl := range w.let.Models {
			lat, err := n.routeLatency(w.run, pl.Name)
			if err != nil {
				n.log.Warn("route latency", zap.String("model", pl.Name), zap.Error(err))
				continue
			}
			entries[pl.Name] = append(entries[pl.Name], routeEntry{g: w.run, weight: max(pl.Rate, 0.001), lat: lat})
		}
	}
	n.router.install(entries)
	_ = plan
}

// routeLatency is ℓ(b) of a model on a running gpu-let, as its executor
// schedules it.
func (n *node) routeLatency(g *gpuletRun, model string) (sched.Latency, error) {
	g.mu.Lock()
	req, resp := g.models[model], g.loaded[model]
	g.mu.Unlock()
	if req == nil {
		return sched.Latency{}, fmt.Errorf("%s is not loaded on %s", model, g.id)
	}
	pts := make([]sched.LatencyPoint, len(req.Latency))
	for i, p := range req.Latency {
		pts[i] = sched.LatencyPoint{Batch: int(p.Batch), MS: p.Ms}
	}
	var overhead time.Duration
	if resp != nil {
		overhead = time.Duration(resp.DispatchOverheadUs) * time.Microsecond
	}
	factor := req.InterferenceFactor
	if factor == 0 {
		factor = 1
	}
	return sched.NewLatency(pts, factor, overhead, int(max(req.MaxBatchSize, 1)))
}

// drainModelThenUnload unloads a model from a kept gpu-let once the
// requests it already holds have had time to finish (one SLO).
func (n *node) drainModelThenUnload(ctx context.Context, g *gpuletRun, name string) {
	wait := time.Second
	if m, ok := n.catalog.get(name); ok {
		wait = m.Config.SLO.D()
	}
	select {
	case <-time.After(wait):
	case <-ctx.Done():
	}
	if err := g.unloadModel(ctx, name); err != nil {
		n.log.Warn("unload model", zap.String("model", name), zap.String("gpulet", g.id), zap.Error(err))
	}
}
