package daemon

import (
	"context"

	"github.com/gpulet/gpuletd/gpulet"
)

// reloadNewFiles reloads, on every serving gpu-let, the models of which the
// catalog now holds another file than the one its executor loaded: a model
// file replaced and loaded again through the repository API. The plan need
// not change for them (the same model at the same rate, perhaps with its
// old file's profile), so the reorganization alone would leave the old
// weights serving; the executor swaps the new file in while the old one
// serves (executors.Retune), its queued requests kept. It runs under
// planMu, after each plan is applied.
func (n *node) reloadNewFiles(ctx context.Context, plan *gpulet.Plan) {
	x := executors{n: n, plan: plan}
	for _, s := range n.running() {
		if !n.servesAnOldFile(s.H) {
			continue
		}
		for i := range plan.GPUs {
			if gp := &plan.GPUs[i]; gp.ID == s.GPU {
				x.Retune(ctx, s.H, gp, s.Let)
				break
			}
		}
	}
}

// servesAnOldFile tells whether g's executor holds a model whose file the
// catalog has since loaded anew.
func (n *node) servesAnOldFile(g *gpuletRun) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, req := range g.models {
		if m, ok := n.catalog.get(name); ok && req.Sha256 != m.SHA256 {
			return true
		}
	}
	return false
}
