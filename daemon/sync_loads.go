package daemon

import (
	"context"

	"github.com/gpulet/gpuletd/gpulet"
)

// syncLoads gives every serving gpu-let's executor what the catalog and the
// plan now ask of each model it serves (executors.Retune reloads only the
// models whose load differs): a model file replaced and loaded again
// through the repository API, a configuration loaded again with another
// SLO or largest batch, a profile measured again. The plan need not change
// for any of these (the same models at the same rates), so the
// reorganization alone would leave the old load serving. It runs under
// planMu, after each plan is applied.
func (n *node) syncLoads(ctx context.Context, plan *gpulet.Plan) {
	x := executors{n: n, plan: plan}
	for _, s := range n.running() {
		for i := range plan.GPUs {
			if gp := &plan.GPUs[i]; gp.ID == s.GPU {
				x.Retune(ctx, s.H, gp, s.Let)
				break
			}
		}
	}
}
