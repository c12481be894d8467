package control

import "github.com/gpulet/gpuletd/gpulet"

// Align is gpulet.Align from what runs: plan's layouts laid out on alike
// GPUs so that Reorganize starts, loads and moves the least. The daemon and
// the simulator align every re-plan's plan before they record and apply it.
func Align[H comparable](running []Serving[H], plan *gpulet.Plan, gpus []gpulet.GPU) *gpulet.Plan {
	if len(running) == 0 {
		return plan
	}
	old, _ := runningPlan(running)
	return gpulet.Align(old, plan, gpus)
}
