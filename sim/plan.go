package sim

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/pipeline"
	"go.uber.org/zap"
)

// Planning, as the daemon's planner loop does it (daemon/loop.go,
// daemon/plan.go), through the same rules (package control): at the start
// the node runs the plan for the workload's rates (the deployment an
// operator would start with; its gpu-lets are ready at time 0). Every
// reorganize period each model's rate over the period is folded into an
// EWMA, and the node re-plans for it with headroom (control.Plan) unless
// the plan in force still places every model's rate, the estimate or the
// period's own (control.KeepPlan); every
// second a model whose short-window rate surges over its assigned rate
// triggers a re-plan early (control.SurgeReplan). A plan is applied like
// the daemon applies it (control.Reorganize): kept gpu-lets stay, the new
// ones start beside the old ones and serve after the startup delay; then
// the routes switch at once, and the gpu-lets the plan drops drain (no new
// requests; they finish what they hold) and stop. While a plan is being
// applied the planner waits, as the daemon's loop does, and a period that
// ended meanwhile is taken right after.

// PlanEvent is one plan the node applied.
type PlanEvent struct {
	// AtS is when it was planned, seconds; ServingS when its routes
	// switched.
	AtS      float64 `json:"at_s"`
	ServingS float64 `json:"serving_s"`
	Reason   string  `json:"reason"`
	// Layout is the plan in one line: GPU: size%[model×batch@rate ...].
	Layout string `json:"layout"`
	// GPUs counts the GPUs the plan uses.
	GPUs int `json:"gpus"`
	// Started and Retired count the gpu-lets started and drained; Loaded
	// the models loaded on gpu-lets that stayed.
	Started int `json:"started"`
	Retired int `json:"retired"`
	Loaded  int `json:"loaded"`
	// Unscheduled is the rate the planner could not place, req/s.
	Unscheduled float64 `json:"unscheduled"`
}

// pendingPlan is a plan whose new gpu-lets are starting: the steps
// control.Reorganize asked for after the starts (switch the routes, drain
// what the plan drops) wait for the startup delay.
type pendingPlan struct {
	at    time.Duration // when the routes switch
	plan  *gpulet.Plan
	steps []func() error
	event int // index in engine.events
	// pipes are the pipelines' plans the gpulet plan lays out (nil for
	// models).
	pipes []pipeline.Plan
}

// start applies the first plan, ready at once.
func (e *engine) start() error {
	rates := make([]float64, len(e.models))
	for i, d := range e.node.Input.Demands {
		rates[i] = d.Rate
	}
	p := e.set.plan
	reason := "given"
	switch {
	case len(e.pipes) > 0:
		var err error
		if p, e.nextPipes, err = e.planPipes(true); err != nil {
			return err
		}
		reason = "start"
	case p == nil:
		var err error
		if p, err = e.makePlan(rates); err != nil {
			return err
		}
		reason = "start"
	}
	if err := e.apply(p, reason, 0); err != nil {
		return err
	}
	if e.set.reorganize > 0 {
		e.nextTick, e.nextSurge = e.set.reorganize, control.SurgeCheck
	} else {
		e.nextTick, e.nextSurge = never, never
	}
	return nil
}

// nextControl is the time of the next control event: a pending plan's
// switch, the end of a reorganize period, a surge check (the last two only
// in the offered time).
func (e *engine) nextControl() time.Duration {
	t := min(e.nextTick, e.nextSurge)
	if t >= e.set.duration {
		t = never
	}
	if e.pending != nil {
		t = min(t, e.pending.at)
	}
	return t
}

// control handles the control events due now: a plan switch first, then
// the end of a period (which re-plans), else a surge check.
func (e *engine) control() error {
	if p := e.pending; p != nil && p.at <= e.now {
		if err := e.switchTo(p); err != nil {
			return err
		}
		if e.tickPending && e.now < e.set.duration {
			e.tickPending = false
			return e.period()
		}
		return nil
	}
	tick, surge := e.nextTick <= e.now, e.nextSurge <= e.now
	if surge {
		e.nextSurge += control.SurgeCheck
	}
	if tick {
		e.nextTick += e.set.reorganize
		if surge {
			e.closeShort()
		}
		return e.period()
	}
	if surge {
		return e.surge()
	}
	return nil
}

// period closes a reorganize period and re-plans.
func (e *engine) period() error {
	if e.pending != nil {
		e.tickPending = true
		return nil
	}
	dt := e.tick.Close(e.now)
	if len(e.pipes) > 0 {
		e.foldPipes(dt)
		return e.replanPipes("period")
	}
	rates := make([]float64, len(e.models))
	est := make(map[string]float64, len(e.models))
	own := make(map[string]float64, len(e.models))
	for i, m := range e.models {
		own[m.name], _ = m.count.Close(e.now, dt)
		rates[i] = m.est.Fold(own[m.name], e.set.ewma)
		est[m.name] = rates[i]
	}
	e.misses.Period(e.tallies())
	if control.KeepPlan(e.plan, est, own, true) {
		return nil // what runs serves the rates: no reorganization
	}
	return e.replan("period", rates)
}

// closeShort measures the rates over the last second; early names the
// models whose requests began too late in it to judge a surge on.
func (e *engine) closeShort() (short []float64, early map[string]bool) {
	dt := e.short.Close(e.now)
	short, early = make([]float64, len(e.models)), map[string]bool{}
	if dt <= 0 {
		return short, early
	}
	for i, m := range e.models {
		var judged bool
		if short[i], judged = m.short.Close(e.now, dt); !judged {
			early[m.name] = true
		}
	}
	for _, p := range e.pipes {
		var judged bool
		p.shortRate, judged = p.short.Close(e.now, dt)
		p.shortEarly = !judged
	}
	return short, early
}

// surge re-plans early when a model's rate over the last second outgrows
// what the plan assigns it, or else for its estimates when the miss rule
// asks for more room (control.Misses), as the daemon's surge check does.
// No check runs while a plan is pending: the plan it brings is judged once
// it serves.
func (e *engine) surge() error {
	short, early := e.closeShort()
	if e.pending != nil {
		return nil
	}
	if len(e.pipes) > 0 {
		return e.surgePipes()
	}
	shortBy, est, folded := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for i, m := range e.models {
		shortBy[m.name], est[m.name] = short[i], m.est.Now(&m.count, e.now, e.tick.Since(e.now))
		if r, ok := m.est.Folded(); ok {
			folded[m.name] = r
		}
	}
	why, surged := control.SurgeReplan(control.SurgeInput{
		Now: e.now, LastPlan: e.lastPlan, Plan: e.plan, Headroom: e.set.headroom,
		Short: control.Short{Rates: shortBy, Early: early}, Estimates: est, Folded: folded,
	})
	if why == "" {
		why = e.misses.Check(control.MissInput{Now: e.now, LastPlan: e.lastPlan, Plan: e.plan, Settled: true, Tallies: e.tallies(),
			Estimates: est, Headroom: e.set.headroom})
		if why == "" {
			return nil
		}
		surged = est
	}
	rates := make([]float64, len(e.models))
	for i, m := range e.models {
		rates[i] = surged[m.name]
	}
	return e.replan(why, rates)
}

// replan plans for the estimated rates and applies the plan.
func (e *engine) replan(reason string, rates []float64) error {
	e.lastPlan = e.now
	p, err := e.makePlan(rates)
	if err != nil {
		return err
	}
	return e.apply(p, reason, e.set.startup)
}

// makePlan runs the planner for the estimated rates through control.Plan
// and lays its layouts out on the GPUs through control.Align, as the daemon
// does.
func (e *engine) makePlan(rates []float64) (*gpulet.Plan, error) {
	in := e.node.Input
	in.Demands = slices.Clone(in.Demands)
	for i := range in.Demands {
		in.Demands[i].Rate = rates[i]
	}
	p, err := control.Plan(e.ctx, e.set.algo, in, e.node.Options, e.misses.Room(e.set.headroom))
	if err != nil {
		return nil, fmt.Errorf("simulate: plan at %v: %w", e.now, err)
	}
	return control.Align(e.running(), p, in.GPUs), nil
}

// apply makes the node run p through control.Reorganize, as the daemon
// does: the new gpu-lets start now and serve, with the routes switched and
// the dropped gpu-lets draining, after delay (at once when nothing starts
// or loads).
func (e *engine) apply(p *gpulet.Plan, reason string, delay time.Duration) error {
	for gi, gp := range p.GPUs {
		if e.gpuByID(gp.ID, gi) == nil {
			return fmt.Errorf("simulate: %w: plan names GPU %q, not one of the workload's", ErrBadOptions, gp.ID)
		}
		for _, pl := range gp.GPULets {
			for _, pm := range pl.Models {
				if e.modelIdx(pm.Name) < 0 {
					return fmt.Errorf("simulate: %w: plan places %q, not a model of the workload", ErrBadOptions, pm.Name)
				}
			}
		}
	}
	node := &virtualNode{e: e}
	out, err := control.Reorganize(e.ctx, node, e.running(), p)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	e.events = append(e.events, PlanEvent{AtS: e.now.Seconds(), Reason: reason, Layout: p.Layout(), GPUs: p.UsedGPUs(),
		Started: out.Started, Retired: out.Stopped, Loaded: out.Loaded, Unscheduled: p.UnscheduledRate()})
	if out.Changed() {
		e.reorgs++
	}
	e.set.log.Debug("plan", zap.Duration("at", e.now), zap.String("reason", reason), zap.String("layout", p.Layout()),
		zap.Int("started", out.Started), zap.Int("retired", out.Stopped))
	pp := &pendingPlan{at: e.now, plan: p, steps: node.steps, event: len(e.events) - 1, pipes: e.nextPipes}
	e.nextPipes = nil
	if out.Ready() || delay == 0 {
		return e.switchTo(pp)
	}
	pp.at = e.now + delay
	e.pending = pp
	return nil
}

// running lists the serving gpu-lets with the plan gpu-let each runs, for
// control.Reorganize: an active gpu-let serves exactly the models of the
// plan gpu-let the last switch routed to it (engine.route).
func (e *engine) running() []control.Serving[*glet] {
	var out []control.Serving[*glet]
	for _, l := range e.lets {
		if l.state == active {
			out = append(out, control.Serving[*glet]{GPU: l.gpu.id, Let: l.planned, H: l})
		}
	}
	return out
}

// switchTo makes a pending plan the one the router follows: it takes the
// steps Reorganize left for the switch.
func (e *engine) switchTo(pp *pendingPlan) error {
	e.pending = nil
	e.plan = pp.plan
	e.admission = control.NewAdmission(pp.plan, e.admission)
	e.events[pp.event].ServingS = e.now.Seconds()
	e.switchPipes(pp.pipes)
	for _, step := range pp.steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// route points the router at the serving gpu-lets: starting ones become
// active, every placement takes the plan's interference factor and batch
// cap, and kept routes keep their counts and credit, as the daemon's router
// does.
func (e *engine) route(serving []control.Serving[*glet]) error {
	type key struct {
		m int
		l *glet
	}
	sent := map[key]sched.Target{}
	for _, m := range e.models {
		for j, l := range m.owners {
			sent[key{m.idx, l}] = m.targets[j]
		}
		m.owners, m.targets = nil, nil
	}
	for _, l := range e.lets {
		for _, lm := range l.ms {
			if lm != nil {
				lm.routed = false
			}
		}
	}
	for _, sv := range serving {
		l := sv.H
		l.planned = sv.Let
		if l.state == starting {
			l.state = active
			e.sizesChange(e.now, l.size)
		}
		for _, pm := range sv.Let.Models {
			m := e.models[e.modelIdx(pm.Name)]
			capB := 0
			if e.set.capShared {
				capB = control.BatchCap(sv.Let, pm, e.profileOn(m, l.gpu))
			}
			if err := l.place(e.now, m, pm.Factor, capB); err != nil {
				return fmt.Errorf("simulate: %w", err)
			}
			l.ms[m.idx].routed = true
			l.published[m.idx] = 0 // a new route takes the gpu-let's state at its first request
			m.owners = append(m.owners, l)
			prev := sent[key{m.idx, l}]
			t := sched.Target{Weight: control.RouteWeight(pm), Sent: prev.Sent, Credit: prev.Credit}
			t.Latency = l.ms[m.idx].base
			m.targets = append(m.targets, t)
		}
	}
	return nil
}

// virtualNode is the control.Node of the simulated gpu-lets: a start makes
// a starting gpu-let at once; the routes, drains and unloads are steps that
// run when the plan switches (engine.switchTo). Loads and retunes need no
// step: the switch places every model with the plan's factor and cap.
type virtualNode struct {
	e     *engine
	steps []func() error
}

var _ control.Node[*glet] = (*virtualNode)(nil)

// Serial asks for the steps one at a time in the plan's order: gpu-lets
// are numbered by when they start, and a simulation repeats exactly.
func (v *virtualNode) Serial() bool { return true }

func (v *virtualNode) Start(_ context.Context, gp *gpulet.GPUPlan, let gpulet.GPULet) (*glet, error) {
	return v.e.newGpulet(v.e.gpuByID(gp.ID, 0), let.Size, starting) // the switch gives it its plan gpu-let
}

func (v *virtualNode) Load(context.Context, *glet, *gpulet.GPUPlan, gpulet.GPULet, gpulet.Placement) error {
	return nil
}

func (v *virtualNode) Retune(context.Context, *glet, *gpulet.GPUPlan, gpulet.GPULet) {}

func (v *virtualNode) Route(serving []control.Serving[*glet]) {
	serving = slices.Clone(serving)
	v.steps = append(v.steps, func() error { return v.e.route(serving) })
}

func (v *virtualNode) Stop(_ context.Context, l *glet) {
	v.steps = append(v.steps, func() error {
		l.state = draining
		v.e.retireIfDone(l)
		return nil
	})
}

// Unload needs no step of its own: the switch routes only the plan's
// models, and a model no longer routed finishes what it holds.
func (v *virtualNode) Unload(context.Context, *glet, string) {}

func (e *engine) gpuByID(id string, hint int) *gpu {
	if hint < len(e.gpus) && e.gpus[hint].id == id {
		return e.gpus[hint]
	}
	for _, g := range e.gpus {
		if g.id == id {
			return g
		}
	}
	return nil
}

// modelIdx is the index of the named model (plans only name the
// workload's models).
func (e *engine) modelIdx(name string) int {
	for i, m := range e.models {
		if m.name == name {
			return i
		}
	}
	return -1
}
