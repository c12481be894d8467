package control

import (
	"math"

	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/gpulet"
)

// LatencyPoints is ℓ(b) for b = 1..maxB on a gpu-let of size percent, from
// prof, as the daemon hands it to an executor and the simulator to its
// scheduler: it stops at the first batch the profile cannot give.
func LatencyPoints(prof *gpulet.Profile, size, maxB int) []sched.LatencyPoint {
	var pts []sched.LatencyPoint
	for b := 1; b <= maxB; b++ {
		ms, ok := prof.Latency(b, size)
		if !ok {
			break
		}
		pts = append(pts, sched.LatencyPoint{Batch: b, MS: ms})
	}
	return pts
}

// BatchCap is the largest batch a model placed by pl on let may form, its
// latencies on let's size coming from prof: 0 (no cap) where it is alone.
// On a gpu-let it shares with other models, the plan checked one duty cycle
// in which every model runs its plan batch; a larger batch stretches that
// cycle by its extra time, which is fine while every other model still
// meets its SLO after the stretched cycle (each of the n models may take
// 1/(n−1) of a neighbour's slack, SLO − worst case, so that all stretching
// at once still holds) and the model's own batch still ends in time after a
// cycle's wait. Allowing it lets a burst above the plan's rate go out in one
// batch instead of waiting a whole cycle. The cap is never below the plan's
// batch.
func BatchCap(let gpulet.GPULet, pl gpulet.Placement, prof *gpulet.Profile) int {
	if len(let.Models) < 2 {
		return 0
	}
	b := max(pl.Batch, 1)
	if prof == nil {
		return b
	}
	room := math.Inf(1)
	share := float64(len(let.Models) - 1)
	for _, o := range let.Models {
		if o.Name != pl.Name {
			room = min(room, (o.SLOMS-o.WorstMS)/share)
		}
	}
	factor := max(pl.Factor, 1)
	for c := b + 1; c <= prof.MaxBatch(let.Size); c++ {
		ms, ok := prof.Latency(c, let.Size)
		if !ok {
			break
		}
		l := ms * factor
		if l-pl.LatencyMS > room || let.DutyMS+l > pl.SLOMS {
			break
		}
		b = c
	}
	return b
}

// RouteWeight is the router's weight for a placement: the rate the plan
// assigns it, and a token weight for one the plan gives no rate (a model
// placed at its minimum), so that it is still routed to.
func RouteWeight(pl gpulet.Placement) float64 { return max(pl.Rate, 0.001) }
