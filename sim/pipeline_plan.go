package sim

import (
	"fmt"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/pipeline"
)

// planPipes plans the node's pipeline for its estimated rate (the
// workload's rate at the start), as the daemon would: control.PlanPipeline
// over every GPU, sticking to what each GPU serves now. A node serves one
// pipeline.
func (e *engine) planPipes(initial bool) (*gpulet.Plan, []pipeline.Plan, error) {
	p := e.pipes[0]
	d := control.PipelineDemand{Rate: p.est.Rate, Accuracy: p.plan.Accuracy}
	if initial {
		d.Rate = e.w.Pipelines[p.idx].Rate
	} else if p.scaling == control.ScalePerTask {
		for i := range p.taskEst {
			d.Loads = append(d.Loads, p.taskEst[i].Rate)
		}
	}
	pl, gp, err := control.PlanPipeline(p.p, p.scaling, d, e.node.Input.GPUs, e.layoutNow())
	if err != nil {
		return nil, nil, fmt.Errorf("simulate: plan pipeline at %v: %w", e.now, err)
	}
	return gp, []pipeline.Plan{pl}, nil
}

// layoutNow is the model each GPU serves under the plan in force.
func (e *engine) layoutNow() map[string]string {
	out := map[string]string{}
	if e.plan == nil {
		return out
	}
	for _, g := range e.plan.GPUs {
		for _, l := range g.GPULets {
			if len(l.Models) > 0 {
				out[g.ID] = l.Models[0].Name
			}
		}
	}
	return out
}

// foldPipes folds the period's rates into the pipelines' estimates.
func (e *engine) foldPipes(dt float64) {
	for _, p := range e.pipes {
		r, _ := p.count.Close(e.now, dt)
		p.est.Fold(r, e.set.ewma)
		for i := range p.taskEst {
			r, _ := p.taskCount[i].Close(e.now, dt)
			p.taskEst[i].Fold(r, e.set.ewma)
		}
	}
}

// replanPipes plans the pipelines again and applies the plan.
func (e *engine) replanPipes(reason string) error {
	e.lastPlan = e.now
	gp, pls, err := e.planPipes(false)
	if err != nil {
		return err
	}
	e.nextPipes = pls
	return e.apply(gp, reason, e.set.startup)
}

// surgePipes re-plans early when a pipeline's rate over the last surge
// check outgrows what its plan was made for (control.Surge's rule).
func (e *engine) surgePipes() error {
	p := e.pipes[0]
	if e.plan == nil || e.now-e.lastPlan < control.MinReplanGap {
		return nil
	}
	why := control.Surge(map[string]float64{p.name: p.shortRate}, map[string]float64{p.name: p.plan.Demand}, map[string]bool{p.name: p.shortEarly})
	if why == "" {
		return nil
	}
	p.est.Rate = max(p.est.Rate, p.shortRate)
	return e.replanPipes(why)
}

// switchPipes makes the pipelines' new plans the ones requests follow.
func (e *engine) switchPipes(pls []pipeline.Plan) {
	for k, pl := range pls {
		p := e.pipes[k]
		p.workers.add(p.since, e.now, float64(p.plan.Needed))
		p.since = e.now
		p.plan, p.shares = pl, pl.DeadlineShares()
	}
}
