package daemon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor"
	"github.com/gpulet/gpuletd/executor/engine"
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
	// cpuMemoryMB stands for the memory of the CPU device when neither the
	// host's memory nor a memory limit can be read (host_memory.go): the
	// planner needs a bound.
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
	return n.planInputOf(ctx, n.catalog.all(), rates)
}

// planInputOf is planInput for the models ms alone.
func (n *node) planInputOf(ctx context.Context, ms []*repository.Model, rates map[string]float64) (gpulet.Input, map[string]string) {
	var in gpulet.Input
	devs := n.devices.Inventory().Devices
	types := map[string]mps.Device{}
	var host *hostMemory
	for _, d := range devs {
		if d.Health == mps.HealthFailed {
			continue
		}
		g := gpuOf(d)
		if d.Kind == mps.KindCPU {
			if host == nil {
				host = n.readCPUBound(ctx, d)
			}
			g.MemoryMB, g.MemoryFrom = host.modelsMB(), host.source()
		}
		in.GPUs = append(in.GPUs, g)
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
	for _, m := range ms {
		var profs []*gpulet.Profile
		var why []string
		for _, t := range typeNames {
			if n.live.measuringOn(m.Name, t) {
				if p := n.live.heldProfile(m.Name, t); p != nil {
					profs = append(profs, n.planningProfile(p, types[t])) // measured again: placed as before meanwhile
					continue
				}
				why = append(why, fmt.Sprintf("%s is being profiled on %s", m.Name, t))
				continue
			}
			p, err := n.book.profile(ctx, m, types[t])
			if err != nil {
				why = append(why, err.Error())
				continue
			}
			profs = append(profs, n.planningProfile(p, types[t]))
		}
		if len(profs) == 0 {
			missing[m.Name] = strings.Join(why, "; ")
			continue
		}
		rate := rates[m.Name] // control.Plan adds the headroom
		in.Demands = append(in.Demands, gpulet.Demand{
			Name: m.Name, Profile: profs[0], More: profs[1:],
			SLOMS: float64(m.Config.SLO.D().Microseconds()) / 1000, Rate: rate,
		})
	}
	return in, missing
}

// planningProfile is the profile the planner places a model on d with: on
// the CPU device its latency with the executors' CPU per request (their
// reading and writing, on the gpu-let's cores) added to every request of a
// batch (request_path.go), elsewhere p itself. The executors schedule with
// the profile as measured.
func (n *node) planningProfile(p *gpulet.Profile, d mps.Device) *gpulet.Profile {
	if d.Kind != mps.KindCPU {
		return p
	}
	return p.WithRequestCost(n.path.executorMS())
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

// planFirst applies the first plan, which places every model at its
// minimal rate, and makes the daemon ready; it reports whether it did. A
// daemon told to stop before (while it profiled the models at start)
// plans nothing: a plan made with a cancelled context fails every
// placement, and its warnings would stay in the history as the models'
// reasons for a stop.
func (n *node) planFirst(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	if err := n.replan(ctx, planAtStart, n.planRates()); err != nil {
		n.log.Warn("first plan", zap.Error(err))
	}
	n.progress.reset() // placed now, or unservable with a reason
	n.ready.Store(true)
	return true
}

// replan plans the node for the given rates and applies the plan when it
// changes what runs where. Then, outside the planning lock, it measures
// how far the load it planned for may grow (measureCapacity).
func (n *node) replan(ctx context.Context, reason string, rates map[string]float64) error {
	n.planMu.Lock()
	in, err := n.replanLocked(ctx, reason, rates)
	n.planMu.Unlock()
	if ctx.Err() == nil {
		n.measureCapacity(ctx, in) // also when applying failed in part: the GPUs' capacity stands
	}
	return err
}

// replanLocked is replan's planning and applying, under n.planMu; it
// returns the planner's input less the models its plan found to fit at no
// rate (more memory than the device has, say: reported apart, they are no
// load whose growth the capacity measures).
func (n *node) replanLocked(ctx context.Context, reason string, rates map[string]float64) (gpulet.Input, error) {
	p, err := n.propose(ctx, rates, n.algorithm())
	if ctx.Err() != nil { // stopping: what was not read says nothing of the models
		return p.in, fmt.Errorf("plan: %w", ctx.Err())
	}
	n.installPipelinePlans(p.pipelines)
	if errors.Is(err, errNoHealthyDevice) {
		for _, m := range n.catalog.all() {
			n.unserved.set(m.Name, "no healthy device to place it on")
		}
	}
	n.reportUnplaced(p.missing, p.plan)
	if err != nil {
		return p.in, err
	}
	n.recordPlan(ctx, p.plan, reason)
	return control.Placeable(p.in, p.plan), n.apply(ctx, p.plan, reason, p.modelRates)
}

// proposal is what a re-plan for some rates comes to before anything is
// applied.
type proposal struct {
	// pipelines are the served pipelines' plans (or why they have none).
	pipelines []pipelinePlan
	// modelRates are the rates the models are placed for: those asked,
	// with each pipeline's share of its steps (pipelineRates).
	modelRates map[string]float64
	// in is the planner's input; missing, the models left out of it for
	// want of a profile, with why.
	in      gpulet.Input
	missing map[string]string
	// plan is the planner's plan with control's headroom, laid out on the
	// GPUs where it moves the least from running, what ran when it was
	// made (control.Align); nil when the planner failed.
	plan    *gpulet.Plan
	running []control.Serving[*gpuletRun]
}

// propose plans the node for rates with the planner algo and changes
// nothing: a re-plan (replanLocked) applies what it proposes, and the plan
// preview shows it.
func (n *node) propose(ctx context.Context, rates map[string]float64, algo gpulet.Algo) (proposal, error) {
	var p proposal
	p.pipelines, p.modelRates = n.planPipelines(ctx, rates)
	p.in, p.missing = n.planInput(ctx, p.modelRates)
	plan, err := n.plan(ctx, p.in, algo)
	if err != nil {
		return p, err
	}
	// Its layouts on the GPUs where they move the least from what runs.
	p.running = n.running()
	p.plan = control.Align(p.running, plan, p.in.GPUs)
	return p, nil
}

// Reasons of the re-plans whose plan is always saved (recordPlan).
const (
	planAtStart = "start"  // the first plan
	planAsked   = "manual" // POST /api/v1/reorganize
)

// planPathMeasured is the reason of a period's re-plan that the rates did
// not ask for: the request path's CPU, which the CPU's plans count, was
// measured, or moved (requestPath.observe).
const planPathMeasured = "request path measured"

// recordPlan saves a re-plan's plan in the store when it changes what runs
// where (planHistory), and always at start and when an operator asked for it.
func (n *node) recordPlan(ctx context.Context, plan *gpulet.Plan, reason string) {
	if reason == planAtStart || reason == planAsked || n.history.changed(plan) {
		n.savePlan(ctx, plan, reason)
	}
}

// plan runs the planner algo on in with control's headroom and the miss
// rule's (room), an idle node spread or packed as scheduler.idle_plan says.
func (n *node) plan(ctx context.Context, in gpulet.Input, algo gpulet.Algo) (*gpulet.Plan, error) {
	if len(in.GPUs) == 0 {
		return nil, errNoHealthyDevice
	}
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !n.spreadIdle() {
		return control.PlanPacked(pctx, algo, in, n.plannerOptions(algo), n.room())
	}
	return control.Plan(pctx, algo, in, n.plannerOptions(algo), n.room())
}

// errNoHealthyDevice: the node has no device to plan for.
var errNoHealthyDevice = errors.New("plan: no healthy device")

// algorithm is the configured planner.
func (n *node) algorithm() gpulet.Algo { return gpulet.Algo(n.conf().Scheduler.Algorithm) }

// spreadIdle says that an idle node is spread (scheduler.idle_plan), not
// packed at the minimum rates.
func (n *node) spreadIdle() bool { return n.conf().Scheduler.IdlePlan != config.IdlePlanPack }

// plannerOptions are the options of the planner algo: the interference
// model for the planners that use one.
func (n *node) plannerOptions(algo gpulet.Algo) gpulet.Options {
	opts := gpulet.Options{}
	if algo != gpulet.AlgoGpulet && algo != gpulet.AlgoSBP {
		opts.Interference = n.predictor()
	}
	return opts
}

// reportUnplaced says why the models a re-plan could not place are not
// served — for lack of a profile (missing) or of room (plan, nil when there
// is none) — and records a warning event for each, also for a model placed
// only in part: once, and again only when the reason changes or the model
// was placed in between (planHistory.warnings).
func (n *node) reportUnplaced(missing map[string]string, plan *gpulet.Plan) {
	warnings := map[string]string{}
	for name, why := range missing {
		if n.live.pending(name) {
			continue // being profiled: its note and the profile's events say so
		}
		if n.unserved.reason(name) == "" {
			n.unserved.set(name, "it cannot be placed: "+why)
		}
		warnings[name] = "model cannot be placed: " + why
	}
	var short map[string]float64
	if plan != nil {
		short = plan.Unscheduled
		assigned := plan.Assigned()
		for name := range short {
			what := "model cannot be placed in full: "
			if assigned[name] == 0 {
				n.unserved.set(name, "the plan cannot place it: "+plan.Reasons[name])
				what = "model cannot be placed: "
			}
			warnings[name] = what + plan.Reasons[name]
		}
	}
	for name, msg := range n.history.warnings(warnings) {
		attrs := map[string]string{"model": name}
		if rate, ok := short[name]; ok {
			attrs["unplaced_rate"] = fmt.Sprintf("%.1f", rate)
		}
		n.events.add(EventPlan, store.SeverityWarning, msg, attrs)
	}
}

// savePlan records a plan in the store; a failure is logged (the store's
// state says when it cannot be written), never fatal.
func (n *node) savePlan(ctx context.Context, plan *gpulet.Plan, reason string) {
	rec := store.PlanRecord{Algorithm: n.conf().Scheduler.Algorithm, Reason: reason, Plan: mustJSON(plan), Schedulable: plan.Schedulable}
	if _, err := n.st.SavePlan(ctx, rec); err != nil {
		n.log.Warn("save plan", zap.Error(err))
		return
	}
	n.history.markSaved(plan)
}

// want is one gpu-let a plan asks for, matched to a running one or not.
type want struct {
	device mps.Device
	let    gpulet.GPULet
	gpu    *gpulet.GPUPlan // the plan of its GPU
	// takeOver names the old gpu-lets whose cores it may take
	// (executors.StartOver).
	takeOver []string
}

// startGpulet starts the executor of a wanted gpu-let with its models.
func (n *node) startGpulet(ctx context.Context, w *want) (*gpuletRun, error) {
	var reqs []*pb.LoadModelRequest
	for _, pl := range w.let.Models {
		req, err := n.loadRequest(w, pl)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, req)
	}
	sp := gpuletSpec{device: w.device, size: w.let.Size, memLimitMB: memoryLimitMB(w.device, w.let, w.gpu), takeOver: w.takeOver}
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
func (n *node) loadRequest(w *want, pl gpulet.Placement) (*pb.LoadModelRequest, error) {
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
		Name: m.Name, Version: int32(m.Version), Path: m.File, Sha256: m.SHA256, Platform: m.Platform,
		MaxBatchSize: int32(m.Config.MaxBatchSize), SloUs: m.Config.SLO.D().Microseconds(),
		InterferenceFactor: max(pl.Factor, 1), EmulatedProfile: m.Profile(),
		MaxQueue: queueBound(m, n.conf().Limits.MaxQueuedPerModel), OpLibraries: m.OpLibraries, GraphLevel: int32(m.Config.GraphLevel),
	}
	if m.Config.MaxBatchSize > maxB {
		req.MaxBatchSize = int32(maxB)
	}
	req.BatchCap = int32(control.BatchCap(w.let, pl, n.planningProfile(prof, w.device)))
	for _, pt := range control.LatencyPoints(prof, w.let.Size, maxB) {
		req.Latency = append(req.Latency, &pb.LatencyPoint{Batch: int32(pt.Batch), Ms: pt.MS})
	}
	req.WarmupBatches = warmupBatches(w.device, pl.Batch, maxB)
	// The executor sees the model file's shapes; requests are reshaped to
	// them at the door (reshapeInputs).
	for _, t := range m.Inputs {
		req.Inputs = append(req.Inputs, &pb.TensorSpec{Name: t.Name, Datatype: string(t.DataType), Shape: t.ModelShape()})
	}
	for _, t := range m.Outputs {
		req.Outputs = append(req.Outputs, &pb.TensorSpec{Name: t.Name, Datatype: string(t.DataType), Shape: t.ModelShape()})
	}
	req.WarmupShapes = executor.ShapesToProto(warmupShapes(m))
	if w.device.Kind == mps.KindEmulated {
		req.EmulatedContention = n.contention(w, pl, m)
		req.EmulatedMemoryMb = pl.MemoryMB // the emulated device holds it while loaded
	}
	return req, nil
}

// warmupShapes are the sizes m's executors warm it up at: its
// profile_shapes, the sizes requests bring, for the inputs the executor
// sees as the config gives them (one with a reshape is seen in the model
// file's shape, which those dims do not describe).
func warmupShapes(m *repository.Model) map[string][]int64 {
	out := map[string][]int64{}
	for _, t := range m.Inputs {
		if dims, ok := m.Config.ProfileShapes[t.Name]; ok && t.Reshape == nil {
			out[t.Name] = dims
		}
	}
	return out
}

// contention is the emulated physics' slowdown of a placement next to the
// busiest model of the other gpu-let on its device in the plan (1 when
// alone).
func (n *node) contention(w *want, pl gpulet.Placement, m *repository.Model) float64 {
	ph, err := n.book.physicsOf(w.device.Emulated)
	if err != nil || ph == nil || w.gpu == nil {
		return 1
	}
	for _, l := range w.gpu.GPULets {
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
	return 1
}

// installRoutes points the router at the serving gpu-lets with the plan's
// rates as weights.
func (n *node) installRoutes(serving []control.Serving[*gpuletRun]) {
	entries := map[string][]routeEntry{}
	var slow []slowStart
	for _, sv := range serving {
		for _, pl := range sv.Let.Models {
			lat, overhead, err := n.routeLatency(sv.H, pl.Name)
			if err != nil {
				n.log.Warn("route latency", zap.String("model", pl.Name), zap.Error(err))
				continue
			}
			entries[pl.Name] = append(entries[pl.Name], routeEntry{g: sv.H, weight: control.RouteWeight(pl), lat: lat})
			slo := time.Duration(pl.SLOMS * float64(time.Millisecond))
			if slo > 0 && lat.MaxBatch() > 0 && lat.At(1) > slo {
				slow = append(slow, slowStart{model: pl.Name, gpulet: sv.H.id, one: lat.At(1), overhead: overhead, slo: slo})
			}
		}
	}
	n.router.install(entries)
	n.reportSlowStarts(slow)
}

// queueBound is how many of m's requests one executor holds: its own
// max_queue where it is below the server's limits.max_queued_per_model.
func queueBound(m *repository.Model, server int) int32 {
	if q := m.Config.MaxQueue; q > 0 && q < server {
		return int32(q)
	}
	return int32(server)
}

// warmupBatches are the batch sizes an executor runs a model at before it
// serves: 1, the plan's batch and the largest; on an NVIDIA GPU every size
// it pads batches to (engine.FixedShapes), so that no session opens, and
// searches its algorithms, while serving — above the plan's batch cap too:
// a later plan that raises the cap then opens nothing on the GPU that
// serves (on an H200, opening lenet5's and resnet18's new sizes at such a
// retune cost 10% of that second's requests at 800 req/s). The plan's
// memory estimate already counts a session per size (sessionsOn).
func warmupBatches(dev mps.Device, planBatch, maxB int) []int32 {
	if dev.Kind == mps.KindNVIDIA {
		warm := make([]int32, 0, 8)
		for _, size := range engine.PaddedSizes(maxB) {
			warm = append(warm, int32(size))
		}
		return warm
	}
	warm := []int32{1, int32(min(max(planBatch, 1), maxB)), int32(maxB)}
	slices.Sort(warm)
	return slices.Compact(warm)
}

// routeLatency is ℓ(b) of a model on a running gpu-let, as its executor
// schedules it (executor.ScheduledLatency: up to the batch cap), and the
// executor's dispatch overhead included in ℓ(1).
func (n *node) routeLatency(g *gpuletRun, model string) (sched.Latency, time.Duration, error) {
	g.mu.Lock()
	req, resp := g.models[model], g.loaded[model]
	g.mu.Unlock()
	if req == nil {
		return sched.Latency{}, 0, fmt.Errorf("%s is not loaded on %s", model, g.id)
	}
	var overhead sched.Overhead
	if resp != nil {
		overhead = executor.SchedPoints(resp.DispatchOverhead)
	}
	var pad func(int) int
	if g.device.Kind == mps.KindNVIDIA {
		// The executor runs a batch padded to a fixed size (engine.FixedShapes).
		pad = func(b int) int { return engine.PaddedBatch(int(req.MaxBatchSize), b) }
	}
	_, lat, err := executor.ScheduledLatency(req, executor.SchedPoints(req.Latency), overhead, pad)
	return lat, overhead.At(1), err
}
