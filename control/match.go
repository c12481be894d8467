package control

import "github.com/gpulet/gpuletd/gpulet"

// Running is a gpu-let that serves now on a GPU, as the plan's matcher sees
// it: its size and the models routed to it.
type Running struct {
	Size   int
	Models []string
}

// Match pairs a plan's gpu-lets on one GPU with the gpu-lets running there:
// for each planned gpu-let in order, a running one of the same size not yet
// taken, preferring the one with the most of its models (so that the fewest
// models load and warm up). keep[j] is the running index planned gpu-let j
// keeps, -1 for one to start; retire lists the running gpu-lets no planned
// one keeps, to drain and stop.
func Match(running []Running, planned []gpulet.GPULet) (keep []int, retire []int) {
	used := make([]bool, len(running))
	keep = make([]int, len(planned))
	for j, pl := range planned {
		keep[j] = -1
		best := -1
		for i, r := range running {
			if used[i] || r.Size != pl.Size {
				continue
			}
			if best < 0 || overlap(r, pl) > overlap(running[best], pl) {
				best = i
			}
		}
		if best >= 0 {
			used[best], keep[j] = true, best
		}
	}
	for i := range running {
		if !used[i] {
			retire = append(retire, i)
		}
	}
	return keep, retire
}

// overlap counts the planned gpu-let's models that r already serves.
func overlap(r Running, pl gpulet.GPULet) int {
	n := 0
	for _, m := range pl.Models {
		for _, have := range r.Models {
			if have == m.Name {
				n++
				break
			}
		}
	}
	return n
}

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
