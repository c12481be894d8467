package daemon

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/daemon/config"
)

// An idle node's plan is spread or packed as scheduler.idle_plan says, and
// a reload that changes it takes effect at the next plan.
func TestIdlePlanFollowsTheConfiguration(t *testing.T) {
	ctx := context.Background()
	n, _, _ := mlpOnTheCPU(t)
	least := control.PlanRate(0, control.Headroom)
	for _, tc := range []struct {
		idle   string
		rate   float64
		spread bool
	}{
		{config.IdlePlanSpread, 0, true},
		{config.IdlePlanPack, 0, false},
		{config.IdlePlanSpread, 5, false}, // traffic: planned for it either way
	} {
		t.Run(fmt.Sprintf("%s at %g req/s", tc.idle, tc.rate), func(t *testing.T) {
			cfg := *n.conf()
			cfg.Scheduler.IdlePlan = tc.idle
			n.cfg.Store(&cfg)
			in, missing := n.planInput(ctx, map[string]float64{"mlp": tc.rate})
			require.Empty(t, missing)
			plan, err := n.plan(ctx, in, n.algorithm())
			require.NoError(t, err)
			require.Equal(t, tc.spread, plan.Spread)
			if tc.spread {
				require.Greater(t, plan.Assigned()["mlp"], 10*least, "room, not the least rate")
			} else {
				require.InDelta(t, control.PlanRate(tc.rate, control.Headroom), plan.Assigned()["mlp"], 1e-9)
			}
		})
	}
}
