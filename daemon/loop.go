package daemon

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// Planner loop constants.
const (
	surgeCheck      = time.Second     // how often short-window rates are compared with the plan
	surgeFactor     = 1.25            // a rate this much above its assigned rate is a surge
	surgeMinRate    = 5.0             // requests/s below which surges are ignored
	minReplanGap    = 5 * time.Second // at least this long between surge re-plans
	surgeRateWindow = surgeCheck
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
	surge := time.NewTicker(surgeCheck)
	defer surge.Stop()
	last := time.Now()
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
			cur := n.current.Load()
			if cur == nil || now.Sub(last) < minReplanGap {
				continue
			}
			assigned := cur.plan.Assigned()
			for model, r := range short {
				if r > surgeMinRate && r > surgeFactor*assigned[model] {
					reason = "rate of " + model + " surged"
					break
				}
			}
			if reason == "" {
				continue
			}
			rates = n.planRates()
			for model, r := range short {
				rates[model] = max(rates[model], r)
			}
		}
		last = time.Now()
		if err := n.replan(ctx, reason, rates); err != nil && ctx.Err() == nil {
			n.log.Warn("re-plan", zap.String("reason", reason), zap.Error(err))
		}
	}
}
