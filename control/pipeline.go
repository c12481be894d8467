package control

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/pipeline"
)

// Pipelines in the control plane: the pipeline planner decides which
// variants run on how many workers (whole GPUs, Loki's worker), and
// PipelineLayout turns that into a gpulet.Plan, which Reorganize applies
// like any other plan. The daemon and the simulator both plan pipelines
// through PlanPipeline.

// PipelineScaling is how a pipeline is scaled when its demand changes.
type PipelineScaling string

// The scalings.
const (
	// ScaleJointly is gpuletd's: hardware scaling first, then accuracy
	// scaling over the whole pipeline (pipeline.PlanFor).
	ScaleJointly PipelineScaling = "gpuletd"
	// ScaleHardware keeps every task at full accuracy and serves what the
	// workers carry (pipeline.Options.FullAccuracyOnly).
	ScaleHardware PipelineScaling = "hardware"
	// ScalePerTask scales each task on its own, from its own measured load
	// (pipeline.PerTask): accuracy scaling that does not know the pipeline.
	ScalePerTask PipelineScaling = "per-task"
)

// ErrBadScaling is returned for a scaling PlanPipeline does not know.
var ErrBadScaling = errors.New("unknown pipeline scaling")

// PipelineDemand is what a pipeline is planned for: its estimated request
// rate at the first task and, for per-task scaling, every task's measured
// load (nil: the loads full accuracy would make).
type PipelineDemand struct {
	Rate  float64
	Loads []float64
	// Accuracy is the expected accuracy of the plan in force (0: none). A
	// new plan more accurate than it needs room to spare (ScaleUpMargin).
	Accuracy float64
}

// ScaleUpMargin is the room a pipeline's plan must leave before accuracy
// scaling goes back to more accurate, slower variants as the load falls: it
// plans for this much more than the demand. Going down in accuracy as the
// load rises is immediate. Without it the plan went back up as soon as the
// estimate allowed, and the next burst of the trace met the slower variants
// (bench loki: a third of gpuletd's violations came in the trace's last,
// quiet sixth).
const ScaleUpMargin = 1.2

// PlanPipeline plans p for demand on the node's GPUs with the given
// scaling, each rate with Headroom (PlanRate), gives the GPUs the plan
// leaves idle to its busiest variants (Plan.WithSpare: the node serves this
// pipeline alone, and a detector's objects reach the classifier in bursts
// that one or two classifier GPUs could not absorb), and lays the plan out
// (PipelineLayout) sticking to current (GPU id → the model it serves). A
// demand above what the GPUs carry gets the plan of the most they carry:
// the excess is dropped early at the first task, never queued.
func PlanPipeline(p *pipeline.Pipeline, scaling PipelineScaling, demand PipelineDemand, gpus []gpulet.GPU, current map[string]string) (pipeline.Plan, *gpulet.Plan, error) {
	pl, err := PlanPipelineMix(p, scaling, demand, len(gpus))
	if err != nil {
		return pipeline.Plan{}, nil, err
	}
	pl = pl.WithSpare(len(gpus))
	return pl, PipelineLayout(p, pl, gpus, current), nil
}

// PlanPipelineMix is the pipeline plan of PlanPipeline on workers, before
// spare workers and layout: which variants serve each task, in what
// shares, on how many workers. The daemon, which places a pipeline's
// variants beside its other models with the gpu-let planner, follows its
// shares alone.
func PlanPipelineMix(p *pipeline.Pipeline, scaling PipelineScaling, demand PipelineDemand, workers int) (pipeline.Plan, error) {
	opts := pipeline.Options{Workers: workers, Utilization: PipelineUtilization}
	rate := PlanRate(demand.Rate, Headroom)
	var (
		pl  pipeline.Plan
		err error
	)
	switch scaling {
	case ScaleJointly, ScaleHardware:
		opts.FullAccuracyOnly = scaling == ScaleHardware
		pl, err = pipeline.PlanFor(p, rate, opts)
		if scaling == ScaleJointly && demand.Accuracy > 0 && err == nil && pl.Accuracy > demand.Accuracy {
			if up, uerr := pipeline.PlanFor(p, rate*ScaleUpMargin, opts); uerr == nil && up.Accuracy < pl.Accuracy {
				up.Demand = pl.Demand
				pl = up
			}
		}
	case ScalePerTask:
		loads := slices.Clone(demand.Loads)
		if len(loads) != len(p.Tasks) {
			loads = fullAccuracyLoads(p, demand.Rate)
		}
		loads[0] = demand.Rate
		for i := range loads {
			loads[i] = PlanRate(loads[i], Headroom)
		}
		pl, err = pipeline.PerTask(p, loads, opts)
	default:
		return pipeline.Plan{}, fmt.Errorf("plan pipeline %s: %w: %q", p.Name, ErrBadScaling, scaling)
	}
	if err != nil && !errors.Is(err, pipeline.ErrOverloaded) {
		return pipeline.Plan{}, err
	}
	if pl.Workers == 0 {
		return pipeline.Plan{}, fmt.Errorf("plan pipeline %s: %w", p.Name, err)
	}
	return pl, nil
}

// fullAccuracyLoads are the task loads of rate requests per second at the
// first task with every task's most accurate variant.
func fullAccuracyLoads(p *pipeline.Pipeline, rate float64) []float64 {
	out := make([]float64, len(p.Tasks))
	load := rate
	for i, t := range p.Tasks {
		out[i] = load
		best := t.Variants[0]
		for _, v := range t.Variants {
			if v.Accuracy > best.Accuracy {
				best = v
			}
		}
		load *= best.Fanout
	}
	return out
}

// PipelineLayout places a pipeline plan on gpus: every worker of a variant
// is one whole GPU (a 100% gpu-let) serving that variant alone, at the rate
// its share of its task's load gives it, and the SLO share of its task as
// its latency objective. A variant keeps the GPUs that serve it now
// (current: GPU id → model) as far as its workers go, so that a re-plan
// restarts only what changed; GPUs beyond the plan's workers stay empty.
func PipelineLayout(p *pipeline.Pipeline, pl pipeline.Plan, gpus []gpulet.GPU, current map[string]string) *gpulet.Plan {
	out := &gpulet.Plan{Algo: "pipeline", Schedulable: true, Unscheduled: map[string]float64{}}
	for _, g := range gpus {
		out.GPUs = append(out.GPUs, gpulet.GPUPlan{ID: g.ID, Type: g.Type, Backend: g.Backend, MemoryMB: g.MemoryMB})
	}
	shares := pl.DeadlineShares()
	type want struct {
		vp    pipeline.VariantPlan
		load  float64 // its task's
		slo   float64
		count int
	}
	var wants []*want
	byName := map[string][]*want{} // a model may serve several tasks
	prev := 0.0
	for i, tp := range pl.Tasks {
		slo := (shares[i] - prev) * float64(p.SLO.Milliseconds())
		prev = shares[i]
		for _, vp := range tp.Variants {
			if vp.Workers < 1 {
				continue
			}
			w := &want{vp: vp, load: tp.Load, slo: slo}
			wants = append(wants, w)
			byName[vp.Variant] = append(byName[vp.Variant], w)
		}
	}
	used := make([]bool, len(gpus))
	place := func(gi int, w *want) {
		used[gi] = true
		w.count++
		// The variant's share of its task's load, split evenly.
		rate := w.load * w.vp.Share / float64(w.vp.Workers)
		out.GPUs[gi].GPULets = []gpulet.GPULet{{Size: 100, DutyMS: w.vp.BatchMS, Occupancy: 1, Models: []gpulet.Placement{{
			Name: w.vp.Variant, Batch: w.vp.Batch, Rate: rate, LatencyMS: w.vp.BatchMS, SoloMS: w.vp.BatchMS,
			Factor: 1, WorstMS: 2 * w.vp.BatchMS, SLOMS: w.slo,
		}}}}
	}
	for gi, g := range gpus { // keep what runs where it is
		for _, w := range byName[current[g.ID]] {
			if w.count < w.vp.Workers {
				place(gi, w)
				break
			}
		}
	}
	for _, w := range wants { // the rest on free GPUs, in plan order
		for gi := range gpus {
			if w.count >= w.vp.Workers {
				break
			}
			if !used[gi] {
				place(gi, w)
			}
		}
		if w.count < w.vp.Workers {
			out.Schedulable = false
		}
	}
	return out
}

// PipelineUtilization is the share of a worker's batch throughput a
// pipeline plan counts on (pipeline.Options.Utilization). Measured in the
// simulator on the traffic pipeline, 8 GPUs: planned at 100% (Loki's
// model) the node lost 3.7–11% of the requests at 35–70% of its
// full-accuracy capacity (Poisson arrivals, 60 s), a detector at batch 1
// queueing past its task's deadline; at 80% it lost 0.3–1%, at 70%
// 0.4–0.5%. On the Azure trace (bench loki) 80% left gpuletd 1.0–1.4% of the
// requests in the busy period violated where the trace peaks just above
// what full accuracy carries (the plan still at full accuracy, the trace
// outrunning the estimate), 70% 0.3–0.6%.
const PipelineUtilization = 0.7

// PipelineMaxDemand is the largest demand p's variants carry on workers
// GPUs as PlanPipeline plans them (before headroom).
func PipelineMaxDemand(p *pipeline.Pipeline, workers int) float64 {
	return pipeline.MaxDemand(p, pipeline.Options{Workers: workers, Utilization: PipelineUtilization})
}
