package control

import "github.com/gpulet/gpuletd/gpulet"

// BatchCap is the largest batch a model placed by pl on let may form: on a
// gpu-let it shares with other models, the plan's batch for it (larger
// batches would break the duty cycle the planner checked); 0 (no cap) where
// it is alone.
func BatchCap(let gpulet.GPULet, pl gpulet.Placement) int {
	if len(let.Models) < 2 {
		return 0
	}
	return max(pl.Batch, 1)
}

// RouteWeight is the router's weight for a placement: the rate the plan
// assigns it, and a token weight for one the plan gives no rate (a model
// placed at its minimum), so that it is still routed to.
func RouteWeight(pl gpulet.Placement) float64 { return max(pl.Rate, 0.001) }
