package daemon

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/gpulet"
)

// planRates are the rates to plan for now: the estimate per model
// (rateMeter.estimates).
func (n *node) planRates() map[string]float64 {
	return n.rates.estimates(time.Now())
}

// planLoop re-plans every reorganize period from the rate estimates and
// early when a model's rate surges past what the plan assigns it. It
// returns when ctx ends.
//
// A surge re-plans at most once per MinReplanGap, but the first plan
// (planFirst) was made before any request was counted, for the minimum
// rates, and does not hold the first surge back: a fresh daemon sent the
// long-only mix on emulated V100s a second after it was ready re-planned
// four surge checks after the first that saw the load. (Re-planning that
// soon once showed a CPU node leaving a moved model unrouted for a moment,
// which control.Overlapper now mends.)
func (n *node) planLoop(ctx context.Context) {
	period := time.NewTicker(n.conf().Scheduler.ReorganizePeriod.D())
	defer period.Stop()
	surge := time.NewTicker(control.SurgeCheck)
	defer surge.Stop()
	poll := newPoll(n.conf().RepositoryPoll.D())
	defer poll.stop()
	start := time.Now()
	last := start.Add(-control.MinReplanGap)
	var gate surgeGate
	pauses := &pauseWatch{}
	var watching sync.WaitGroup
	defer watching.Wait() // after ctx ended, which ends the watch
	watching.Go(func() { pauses.run(ctx) })
	n.path.observe(n.samplePath(start))
	n.devWatch.observe(n.devices.Inventory().Devices) // what the surge checks compare with
	for {
		var reason string
		var rates map[string]float64
		select {
		case <-ctx.Done():
			return
		case <-n.reloaded:
			period.Reset(n.conf().Scheduler.ReorganizePeriod.D())
			poll.reset(n.conf().RepositoryPoll.D())
			n.planMu.Lock()
			n.applyToExecutors(ctx)
			n.planMu.Unlock()
			n.syncRepository(ctx, false)
			continue
		case <-poll.c():
			n.syncRepository(ctx, true)
			continue
		// A ticker's time is when it ticked, which a re-plan that took
		// longer than a tick leaves behind: the rates are measured to now.
		case <-period.C:
			now := time.Now()
			moved := n.path.observe(n.samplePath(now))
			var own map[string]float64
			reason = "period"
			n.forgetUnserved() // a version its policy retired, say
			rates, own = n.rates.closePeriod(now)
			n.stepRates.closePeriod(now)
			n.closeMissPeriod()
			if n.keepPlan(rates, own) {
				if !moved {
					continue
				}
				// The rates are served, but the CPU's plans count the
				// request path anew: planned again, and its capacity.
				reason = planPathMeasured
			}
		case <-surge.C:
			now := time.Now()
			reason, rates = n.gatedSurgeCheck(&gate, pauses.last(), now, start, last)
			if why := n.deviceCheck(); why != "" && reason == "" {
				reason, rates = why, n.rates.estimates(now)
			}
			if reason == "" {
				continue
			}
		}
		last = time.Now()
		if err := n.replan(ctx, reason, rates); err != nil && ctx.Err() == nil {
			n.log.Warn("re-plan", zap.String("reason", reason), zap.Error(err))
		}
	}
}

// surgeCheck closes the short window at now and says why the node re-plans
// before the period ends, with the rates to plan for; "" when it does not:
// a surge, or else the miss rule (missCheck), which plans for the
// estimates. start is when the loop began, last when it last re-planned.
func (n *node) surgeCheck(now, start, last time.Time) (string, map[string]float64) {
	short := n.rates.closeShort(now)
	pipes := n.takePipelineRates(short.Rates)
	var plan *gpulet.Plan
	if cur := n.current.Load(); cur != nil {
		plan = cur.plan
	}
	n.dropUnprofiledRates(short.Rates, plan)
	estimates := n.rates.estimates(now)
	reason, rates := control.SurgeReplan(control.SurgeInput{
		Now: now.Sub(start), LastPlan: last.Sub(start), Plan: plan, Headroom: control.Headroom,
		Short: short, Estimates: estimates, Folded: n.rates.folded(),
	})
	if reason == "" {
		if reason = n.missCheck(now.Sub(start), last.Sub(start), estimates); reason == "" {
			return "", nil
		}
		return reason, estimates
	}
	for name, r := range pipes {
		rates[name] = max(rates[name], r)
	}
	return reason, rates
}

// keepPlan says that a period's re-plan may leave what runs as it is: the
// plan in force still places every model's rate (its estimate or the
// period's own, the larger) and runs whole (control.KeepPlan,
// control.Settled), and the configured planner made it (a reload that
// changes scheduler.algorithm re-plans at the period). Pipelines plan
// their steps' rates themselves (planPipelines): a node that serves one
// re-plans every period.
func (n *node) keepPlan(estimates, period map[string]float64) bool {
	n.planMu.Lock()
	defer n.planMu.Unlock()
	cur := n.current.Load()
	if cur == nil || cur.plan == nil || len(n.catalog.allPipelines()) > 0 ||
		cur.plan.Algo != gpulet.Algo(n.conf().Scheduler.Algorithm) {
		return false
	}
	if !control.KeepPlan(cur.plan, estimates, period, n.spreadIdle()) || !control.Settled(n.running(), cur.plan) {
		return false
	}
	n.log.Debug("period: the plan in force serves the rates; kept", zap.Any("estimates", estimates), zap.Any("period", period))
	return true
}

// takePipelineRates removes the pipelines' own rates from short and returns
// them. A pipeline is no model of the plan (it assigns it nothing), so its
// rate is no surge; its surges show in its steps' models, and the re-plan
// they cause plans the pipeline for its short rate too.
func (n *node) takePipelineRates(short map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, p := range n.catalog.allPipelines() {
		if r, ok := short[p.Name]; ok {
			out[p.Name] = r
			delete(short, p.Name)
		}
	}
	return out
}

// dropUnprofiledRates removes from short the models that wait for a live
// profile (profile_live.go) and that plan neither places nor leaves
// unscheduled: no plan can place them before they are measured, and the
// re-plan that follows their profile plans for their rate. Judged a surge,
// such a model's traffic re-planned the node every MinReplanGap while it
// was measured, for nothing it could place, and could move the models
// serving beside the profile (on an H200, one such re-plan put lenet5 on a
// 20% gpu-let while resnet18 was measured beside it; lenet5 kept 89.8% of
// its requests within its SLO in that run).
func (n *node) dropUnprofiledRates(short map[string]float64, plan *gpulet.Plan) {
	var planned map[string]float64
	if plan != nil {
		planned = control.PlannedFor(plan)
	}
	for name := range short {
		if _, ok := planned[name]; !ok && n.live.pending(name) {
			delete(short, name)
		}
	}
}

// poll is a ticker that may be off (every 0).
type poll struct{ t *time.Ticker }

func newPoll(every time.Duration) *poll {
	p := &poll{}
	p.reset(every)
	return p
}

// reset makes it tick every every from now, or stops it when every is 0.
func (p *poll) reset(every time.Duration) {
	switch {
	case every <= 0:
		p.stop()
	case p.t == nil:
		p.t = time.NewTicker(every)
	default:
		p.t.Reset(every)
	}
}

// c is its channel; nil (never ready) while it is off.
func (p *poll) c() <-chan time.Time {
	if p.t == nil {
		return nil
	}
	return p.t.C
}

func (p *poll) stop() {
	if p.t != nil {
		p.t.Stop()
		p.t = nil
	}
}
