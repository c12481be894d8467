package daemon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/pipeline"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// Accuracy scaling of the daemon's pipelines (Loki's, pipeline package).
//
// A step of a pipeline may run its model or any served model that declares
// itself a variant of it (variant_of, with its accuracy) and takes and gives
// the same tensors. With every plan the daemon plans each pipeline as the
// simulator does (control.PlanPipelineMix): hardware scaling while the
// node's workers carry the pipeline's demand with the most accurate models,
// else the variant mix of the highest expected end-to-end accuracy that
// does, down to the pipeline's min_accuracy. The daemon's worker is a
// gpu-let of the smallest size the first healthy device allows (a whole GPU
// in the simulator, which gives a pipeline the node alone); a variant's
// batch times are its profile at that size, the fan-out of a variant the
// mean number of rows it has written so far (1 before any). The gpu-let
// planner places each variant for its share of its step's load (or its
// measured rate, when more), and the door routes each step request over
// the gpu-lets of the step's planned variants together, weighted by the
// plan's rates, as the simulator does; a request refused for its deadline
// or its load is rerouted once to another gpu-let of any of the step's
// variants where it can still finish (Loki's opportunistic rerouting).

// pipelinePlans is the variant mix of every pipeline and what the door has
// measured of the variants.
type pipelinePlans struct {
	mu sync.Mutex
	by map[string]*pipelineState
}

// pipelineState is one pipeline's plan and measures.
type pipelineState struct {
	// mix[i] are step i's variants and their shares.
	mix [][]variantShare
	// plan is the last plan (Tasks empty before the first) and shares its
	// split of the SLO among the steps.
	plan   pipeline.Plan
	shares []float64
	// fanout is each variant's mean number of rows of the fan-out tensor.
	fanout map[string]*meanOf
	// served counts the pipeline's requests served and recent is the EWMA
	// of their accuracy (0 before any); rerouted counts the step requests
	// rerouted to another gpu-let after a refusal.
	served   int64
	recent   float64
	rerouted int64
	// unplanned says why the last plan failed ("" when it did not).
	unplanned string
}

// variantShare is one variant of a step and its share of the step's
// requests.
type variantShare struct {
	Model string  `json:"model"`
	Share float64 `json:"share"`
}

// meanOf is a running mean over about the last fanoutWindow values (older
// ones fade out geometrically), so that a fan-out that changes with the
// traffic's content is followed.
type meanOf struct{ sum, n float64 }

// fanoutWindow is how many recent values a meanOf weighs.
const fanoutWindow = 1000

func (m *meanOf) add(v float64) {
	if m.n >= fanoutWindow {
		m.sum -= m.sum / m.n
		m.n--
	}
	m.sum, m.n = m.sum+v, m.n+1
}
func (m *meanOf) mean(def float64) float64 {
	if m.n == 0 {
		return def
	}
	return m.sum / m.n
}

// accuracyEWMA is the weight of a new request in a pipeline's recent served
// accuracy.
const accuracyEWMA = 0.05

func (pp *pipelinePlans) state(name string) *pipelineState {
	if pp.by == nil {
		pp.by = map[string]*pipelineState{}
	}
	s := pp.by[name]
	if s == nil {
		s = &pipelineState{fanout: map[string]*meanOf{}}
		pp.by[name] = s
	}
	return s
}

// planOf reports whether s's plan was made for a pipeline whose steps run
// the models steps, in order: a pipeline loaded again with other steps
// keeps its last plan until a new one is made, which does not fit it.
func (s *pipelineState) planOf(steps []*repository.Model) bool {
	if len(s.plan.Tasks) != len(steps) || len(steps) == 0 {
		return false
	}
	for i, tp := range s.plan.Tasks {
		if tp.Task != steps[i].Name {
			return false
		}
	}
	return true
}

// variants are the models the plan gives step i of pipeline name, whose
// own model is step: the variants with a share of its requests (none
// before a plan, or when the plan is of other steps).
func (pp *pipelinePlans) variants(name string, i int, step string) []string {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	s := pp.state(name)
	if i >= len(s.mix) || s.plan.Tasks[i].Task != step {
		return nil
	}
	out := make([]string, len(s.mix[i]))
	for k, v := range s.mix[i] {
		out[k] = v.Model
	}
	return out
}

// deadlineShares split a request's SLO among the steps of pipeline name,
// which run the models steps, by its plan's task budgets
// (pipeline.Plan.DeadlineShares), along waits where its steps branch
// (DeadlineSharesOf; nil: a chain); nil before a plan of these steps.
func (pp *pipelinePlans) deadlineShares(name string, steps []*repository.Model, waits [][]int) []float64 {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	s := pp.state(name)
	if !s.planOf(steps) {
		return nil
	}
	if waits != nil { // branches: split along what waits on each step
		return s.plan.DeadlineSharesOf(waits)
	}
	return s.shares
}

// rows records that variant wrote n rows of the fan-out tensor.
func (pp *pipelinePlans) rows(name, variant string, n int) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	s := pp.state(name)
	m := s.fanout[variant]
	if m == nil {
		m = &meanOf{}
		s.fanout[variant] = m
	}
	m.add(float64(n))
}

// served records a request of the pipeline served with accuracy acc.
func (pp *pipelinePlans) served(name string, acc float64) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	s := pp.state(name)
	s.served++
	if s.served == 1 {
		s.recent = acc
	} else {
		s.recent += accuracyEWMA * (acc - s.recent)
	}
}

// unplannedFor records why a pipeline could not be planned.
func (pp *pipelinePlans) unplannedFor(name, why string) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.state(name).unplanned = why
}

// rerouted counts a step request of the pipeline rerouted to another gpu-let.
func (pp *pipelinePlans) rerouted(name string) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.state(name).rerouted++
}

// pipelineScaling is a pipeline's accuracy scaling in the admin status.
type pipelineScaling struct {
	// Scaling is the plan's mode (pipeline.HardwareScaling or
	// AccuracyScaling; "" before the first plan), Planned its expected
	// accuracy and Mix each step's variants and shares.
	Scaling string           `json:"scaling,omitempty"`
	Planned float64          `json:"planned_accuracy,omitempty"`
	Mix     [][]variantShare `json:"mix,omitempty"`
	// Accuracy is the recent accuracy of the requests served (an EWMA),
	// Served their number, Rerouted the step requests rerouted to another
	// gpu-let after a refusal.
	Accuracy float64 `json:"accuracy,omitempty"`
	Served   int64   `json:"served"`
	Rerouted int64   `json:"rerouted"`
	// Unplanned says why the pipeline could not be planned last time (its
	// steps run their own models, or the last plan's mix, meanwhile).
	Unplanned string `json:"unplanned,omitempty"`
}

// snapshotOf is snapshot for the status of pipeline name whose steps run
// the models steps: without a plan of other steps (the pipeline was loaded
// again since) or of steps that cannot run (none).
func (pp *pipelinePlans) snapshotOf(name string, steps []*repository.Model) pipelineScaling {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	s := pp.state(name)
	sc := s.snapshot()
	if !s.planOf(steps) {
		sc.Scaling, sc.Planned, sc.Mix = "", 0, nil
	}
	return sc
}

// snapshot is a pipeline's scaling for the status.
func (pp *pipelinePlans) snapshot(name string) pipelineScaling {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.state(name).snapshot()
}

// snapshot is s's scaling for the status (pipelinePlans.mu held).
func (s *pipelineState) snapshot() pipelineScaling {
	out := pipelineScaling{Scaling: s.plan.Scaling, Planned: s.plan.Accuracy, Accuracy: s.recent, Served: s.served, Rerouted: s.rerouted, Unplanned: s.unplanned}
	for i := range s.mix {
		out.Mix = append(out.Mix, slices.Clone(s.mix[i]))
	}
	return out
}

// set installs a pipeline's new plan.
func (pp *pipelinePlans) set(name string, pl pipeline.Plan) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	s := pp.state(name)
	s.plan, s.shares, s.unplanned = pl, pl.DeadlineShares(), ""
	s.mix = make([][]variantShare, len(pl.Tasks))
	for i, tp := range pl.Tasks {
		for _, v := range tp.Variants {
			if v.Share > 0 {
				s.mix[i] = append(s.mix[i], variantShare{Model: v.Variant, Share: v.Share})
			}
		}
	}
}

// fanoutRows is the mean number of rows pipeline name's requests wrote in
// its fan-out tensor lately, over every variant of the step that writes
// it; 0 before any.
func (pp *pipelinePlans) fanoutRows(name string) float64 {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	var sum, n float64
	for _, m := range pp.state(name).fanout {
		sum, n = sum+m.sum, n+m.n
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// fanoutOf is a variant's mean fan-out so far (def before any).
func (pp *pipelinePlans) fanoutOf(name, variant string, def float64) float64 {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if m := pp.state(name).fanout[variant]; m != nil {
		return m.mean(def)
	}
	return def
}

// variantsOf lists the models that may run step s of a pipeline whose step
// model is m, of those served (EnsembleStep.Variants).
func (c *catalog) variantsOf(s repository.EnsembleStep, m *repository.Model) []*repository.Model {
	return s.Variants(m, c.all())
}

// drainWait is how long a request of model name may still be due after it
// was routed: the model's SLO, or the SLO of a pipeline whose step may run
// it when that is longer (a pipeline's last step is due at the pipeline's
// deadline, later than its model's own SLO when the pipeline's is longer).
// One second for a model no longer served.
func (c *catalog) drainWait(name string) time.Duration {
	m, ok := c.get(name)
	if !ok {
		return time.Second
	}
	wait := m.Config.SLO.D()
	for _, p := range c.allPipelines() {
		steps, err := c.steps(p)
		if err != nil || p.Config.SLO.D() <= wait {
			continue
		}
		for i, sm := range steps {
			if slices.ContainsFunc(c.variantsOf(p.Config.Ensemble.Steps[i], sm), func(v *repository.Model) bool { return v.Name == name }) {
				wait = p.Config.SLO.D()
			}
		}
	}
	return wait
}

// errNoWorker is returned when no device can serve a pipeline.
var errNoWorker = errors.New("no healthy device")

// pipelinePlan is one served pipeline's plan for its estimated rate, or
// why it has none (err).
type pipelinePlan struct {
	name string
	rate float64
	plan pipeline.Plan
	err  error
}

// planPipelines plans every served pipeline for its estimated rate (rates)
// and returns the plans with the rates the gpu-let planner is to place
// (pipelineRates): each planned variant is placed for its share of its
// step's load, so a variant the new mix sends requests to is placed for
// them before they arrive. It installs nothing (installPipelinePlans).
func (n *node) planPipelines(ctx context.Context, rates map[string]float64) ([]pipelinePlan, map[string]float64) {
	var out []pipelinePlan
	var planned []pipeline.Plan
	for _, p := range n.catalog.allPipelines() {
		pl, err := n.planPipeline(ctx, p, rates[p.Name])
		out = append(out, pipelinePlan{name: p.Name, rate: rates[p.Name], plan: pl, err: err})
		if err == nil {
			planned = append(planned, pl)
		}
	}
	return out, pipelineRates(rates, n.stepRates.estimates(time.Now()), planned)
}

// installPipelinePlans installs the plans the door follows. A pipeline
// whose steps cannot run, or whose variants have no profile yet, keeps its
// last plan and says why it has no new one.
func (n *node) installPipelinePlans(plans []pipelinePlan) {
	for _, p := range plans {
		if p.err != nil {
			n.log.Debug("pipeline not planned", zap.String("pipeline", p.name), zap.Error(p.err))
			n.pipes.unplannedFor(p.name, p.err.Error())
			continue
		}
		n.installPipelinePlan(p.name, p.rate, p.plan)
	}
}

// pipelineRates are the rates to place models for: a variant a planned
// pipeline runs gets its share of its step's load on top of the requests it
// has had from elsewhere (its measured rate less what pipeline steps sent
// it, steps). The plan's share, not the measured one, is what counts: the
// door routes a step over its variants by the plan's rates, so a measured
// share would feed back into itself. Other models keep their measured rate.
func pipelineRates(rates, steps map[string]float64, plans []pipeline.Plan) map[string]float64 {
	out := maps.Clone(rates)
	extra := map[string]float64{}
	for _, pl := range plans {
		for _, tp := range pl.Tasks {
			for _, v := range tp.Variants {
				// The plan's loads carry the headroom control.Plan adds again.
				extra[v.Variant] += tp.Load * v.Share / (1 + control.Headroom)
			}
		}
	}
	for name, r := range extra {
		out[name] = max(out[name]-steps[name], 0) + r
	}
	return out
}

// installPipelinePlan makes pl the plan of pipeline name (planned for
// rate) and says so in the events when its scaling changes.
func (n *node) installPipelinePlan(name string, rate float64, pl pipeline.Plan) {
	if old := n.pipes.snapshot(name); old.Scaling != pl.Scaling {
		n.events.add(EventPlan, store.SeverityInfo, fmt.Sprintf("pipeline %s: %s scaling at %.1f req/s, expected accuracy %.3f", name, pl.Scaling, rate, pl.Accuracy),
			map[string]string{"model": name})
	}
	n.pipes.set(name, pl)
}

// planPipeline plans one pipeline for rate requests per second on the
// node's healthy devices.
func (n *node) planPipeline(ctx context.Context, p *repository.Model, rate float64) (pipeline.Plan, error) {
	dev, workers, size := pipelineWorkers(n.devices.Inventory().Devices)
	if dev == nil {
		return pipeline.Plan{}, errNoWorker
	}
	if steps := len(p.Config.Ensemble.Steps); workers < steps {
		return pipeline.Plan{}, fmt.Errorf("plan pipeline %s: %d worker(s) (gpu-lets of %d%%) for %d steps, and each step needs its own: its steps run their own models", p.Name, workers, size, steps)
	}
	spec, err := n.pipelineSpec(p, size, func(m *repository.Model) (*gpulet.Profile, error) { return n.book.profile(ctx, m, *dev) })
	if err != nil {
		return pipeline.Plan{}, err
	}
	return planPipelineSpec(spec, rate, n.pipes.snapshot(p.Name).Planned, workers)
}

// pipelineWorkers are the workers a pipeline is planned on: gpu-lets of
// the smallest size the first healthy device allows, as many as fit the
// healthy devices. dev is that device (nil: none is healthy).
func pipelineWorkers(devs []mps.Device) (dev *mps.Device, workers, size int) {
	size = 100
	for _, d := range devs {
		if d.Health == mps.HealthFailed {
			continue
		}
		if dev == nil {
			dev = &d
			if g := gpuOf(d); len(g.Sizes) > 0 {
				size = slices.Min(g.Sizes)
			}
		}
		workers += 100 / size
	}
	return dev, workers, size
}

// pipelineSpec describes pipeline p for the pipeline planner: each step's
// variants served now with a profile (profile gives it; an error leaves
// the variant out), their accuracies, fan-outs measured so far and batch
// times on a gpu-let of size.
func (n *node) pipelineSpec(p *repository.Model, size int, profile func(*repository.Model) (*gpulet.Profile, error)) (*pipeline.Pipeline, error) {
	steps, err := n.catalog.steps(p)
	if err != nil {
		return nil, err
	}
	e := p.Config.Ensemble
	spec := &pipeline.Pipeline{Name: p.Name, SLO: p.Config.SLO.D(), MinAccuracy: p.Config.MinAccuracy, PathAccuracy: p.Config.PathAccuracy}
	for i, sm := range steps {
		t := pipeline.Task{Name: sm.Name}
		for _, v := range n.catalog.variantsOf(e.Steps[i], sm) {
			prof, err := profile(v)
			if err != nil || prof.MaxBatch(size) == 0 {
				continue // not profiled (at this size) yet: not a candidate
			}
			fan := 1.0
			switch {
			case i == e.FanoutStep-1 && i == e.FanoutWriter:
				// By variant: a weaker detector finds fewer objects.
				fan = n.pipes.fanoutOf(p.Name, v.Name, n.pipes.fanoutOf(p.Name, sm.Name, 1))
			case i == e.FanoutStep-1:
				// A step between the fan-out's writer and the fan-out (one
				// that reads another of the writer's outputs): the rows the
				// writer's own model found multiply the load after it.
				fan = n.pipes.fanoutOf(p.Name, steps[e.FanoutWriter].Name, 1)
			}
			t.Variants = append(t.Variants, pipeline.Variant{Name: v.Name, Accuracy: v.Config.ModelAccuracy(), Fanout: fan,
				Latency: func(b int) (float64, bool) { return prof.Latency(b, size) }, MaxBatch: prof.MaxBatch(size)})
		}
		if len(t.Variants) == 0 {
			return nil, fmt.Errorf("plan pipeline %s: %s (%s) has no profiled model yet", p.Name, e.Steps[i].Place(), sm.Name)
		}
		spec.Tasks = append(spec.Tasks, t)
	}
	return spec, nil
}

// planPipelineSpec plans a pipeline for rate requests per second on
// workers, jointly (control.PlanPipelineMix, as the simulator plans),
// coming from a plan in force of accuracy inForce (0: none): a plan that
// cannot carry it all is still the best there is.
func planPipelineSpec(spec *pipeline.Pipeline, rate, inForce float64, workers int) (pipeline.Plan, error) {
	return control.PlanPipelineMix(spec, control.ScaleJointly, control.PipelineDemand{Rate: rate, Accuracy: inForce}, workers)
}
