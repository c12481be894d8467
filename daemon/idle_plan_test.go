package daemon

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/daemon/config"
)

// An idle node's plan is spread or packed as scheduler.idle_plan says, and
// a reload that changes it takes effect at the next plan.
func TestIdlePlanFollowsTheConfiguration(t *testing.T) {
	ctx := context.Background()
	n, st, cpu := lendingNode(t)
	n.catalog = newCatalog(t.TempDir(), 0, st, n.events, zap.NewNop())
	m := mlpFile("c", 2_000_000)
	m.Version, m.Config.SLO = 1, config.Duration(time.Second)
	require.NoError(t, n.catalog.add(ctx, m))
	putProfile(t, st, m, cpu.Type, 2)
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
