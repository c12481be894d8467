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
// the plan's devices is the CPU, by the device's kind, not its name.
func TestCapacityOnCPU(t *testing.T) {
	devs := []mps.Device{{ID: "cpu", Kind: mps.KindCPU}, {ID: "gpu0", Kind: mps.KindNVIDIA}, {ID: "cpu1", Kind: mps.KindEmulated}}
	for _, tc := range []struct {
		name string
		gpus []string
		want bool
	}{
		{"the CPU alone", []string{"cpu"}, true},
		{"a GPU and the CPU", []string{"gpu0", "cpu"}, true},
		{"GPUs alone", []string{"gpu0", "cpu1"}, false},
		{"a device the inventory does not hold", []string{"gpu7"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in gpulet.Input
			for _, id := range tc.gpus {
				in.GPUs = append(in.GPUs, gpulet.GPU{ID: id})
			}
			require.Equal(t, tc.want, onCPU(in, devs))
		})
	}
}
