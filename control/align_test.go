package control

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

// A re-plan that lays the same GPUs out in another order: aligned with what
// runs, Reorganize keeps every gpu-let and starts nothing.
func TestAlignKeepsWhatRuns(t *testing.T) {
	gpus := []gpulet.GPU{
		{ID: "g0", Type: "v100", Backend: gpulet.BackendMPS, MemoryMB: 16000},
		{ID: "g1", Type: "v100", Backend: gpulet.BackendMPS, MemoryMB: 16000},
	}
	running := []Serving[int]{
		{GPU: "g0", Let: gpulet.GPULet{Size: 100, Models: []gpulet.Placement{place("a", 4, 10)}}, H: 1},
		{GPU: "g1", Let: gpulet.GPULet{Size: 60, Models: []gpulet.Placement{place("b", 2, 5)}}, H: 2},
	}
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{
		{ID: "g0", Type: "v100", GPULets: []gpulet.GPULet{{Size: 60, Models: []gpulet.Placement{place("b", 2, 6)}}}},
		{ID: "g1", Type: "v100", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{place("a", 4, 12)}}}},
	}}
	for _, tc := range []struct {
		name    string
		plan    *gpulet.Plan
		started int
	}{
		{"as planned", plan, 2},
		{"aligned", Align(running, plan, gpus), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{}
			out, err := Reorganize(context.Background(), r, running, tc.plan)
			require.NoError(t, err)
			require.Equal(t, tc.started, out.Started)
			require.Equal(t, tc.started, out.Stopped)
		})
	}
	require.Same(t, plan, Align[int](nil, plan, gpus), "nothing runs: the plan as it is")
}
