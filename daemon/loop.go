package daemon

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/gpulet"
)

// planRates are the rates to plan for now: the EWMA per model.
func (n *node) planRates() map[string]float64 {
	return n.rates.estimates()
}

// planLoop re-plans every reorganize period from the EWMA rates and early when a model's rate surges past what
// the plan assigns it. It returns when ctx ends.
func (n *node) planLoop(ctx context.Context) {
	period := time.NewTicker(n.conf().Scheduler.ReorganizePeriod.D())
	defer period.Stop()
	surge := time.NewTicker(control.SurgeCheck)
	defer surge.Stop()
	start := time.Now()
	last := start
	for {
		var reason string
		var rates map[string]float64
		select {
		case <-ctx.Done():
			return
		case <-n.reloaded:
			period.Reset(n.conf().Scheduler.ReorganizePeriod.D())
			continue
		case now := <-period.C:
			reason, rates = "period", n.rates.closePeriod(now)
		case now := <-surge.C:
			short := n.rates.closeShort(now)
			var plan *gpulet.Plan
			if cur := n.current.Load(); cur != nil {
				plan = cur.plan
			}
			if reason, rates = control.SurgeReplan(now.Sub(start), last.Sub(start), plan, short, n.planRates()); reason == "" {
				continue
			}
		}
		last = time.Now()
		if err := n.replan(ctx, reason, rates); err != nil && ctx.Err() == nil {
			n.log.Warn("re-plan", zap.String("reason", reason), zap.Error(err))
		}
	}
}
