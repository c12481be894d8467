package daemon

import (
	"testing"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
	"github.com/stretchr/testify/require"
)

// The book keeps the capacity of the latest plan, whichever search ends
// last, and none once a plan has no load.
func TestCapacityBookKeepsTheLatestPlans(t *testing.T) {
	var b capacityBook
	require.Nil(t, b.get())
	t0 := time.Now()
	b.set(t0.Add(time.Second), &capacityStatus{Ratio: 2})
	b.set(t0, &capacityStatus{Ratio: 5}) // an older plan's search ended later
	require.Equal(t, 2.0, b.get().Ratio)
	b.get().Ratio = 9 // a copy
	require.Equal(t, 2.0, b.get().Ratio)
	b.set(t0.Add(2*time.Second), nil)
	require.Nil(t, b.get(), "every model unloaded: no capacity to speak of")
}

// The status says the capacity counts the CPU's compute alone when one of
// the plan's devices is the CPU, by the type it plans with, not its name.
func TestCapacityOnCPU(t *testing.T) {
	for _, tc := range []struct {
		name string
		gpus []gpulet.GPU
		want bool
	}{
		{"the CPU alone", []gpulet.GPU{{ID: "cpu", Type: mps.CPUType}}, true},
		{"a GPU and the CPU", []gpulet.GPU{{ID: "gpu0", Type: "NVIDIA H100"}, {ID: "cpu", Type: mps.CPUType}}, true},
		{"GPUs alone, one named cpu1", []gpulet.GPU{{ID: "gpu0", Type: "NVIDIA H100"}, {ID: "cpu1", Type: "igniter-v100-x20"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, onCPU(gpulet.Input{GPUs: tc.gpus}))
		})
	}
}
