package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
)

func TestDeviceWatch(t *testing.T) {
	ok := func(id string) mps.Device { return mps.Device{ID: id, Health: mps.HealthOK} }
	failed := func(id, why string) mps.Device {
		return mps.Device{ID: id, Health: mps.HealthFailed, HealthDetail: why}
	}
	degraded := func(id string) mps.Device {
		return mps.Device{ID: id, Health: mps.HealthDegraded, HealthDetail: "MPS control daemon is being restarted"}
	}
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{
		{ID: "gpu0", GPULets: []gpulet.GPULet{{Size: 100}}},
		{ID: "gpu1"}, // in the plan's input, no gpu-let on it
	}}
	lost := "the GPU is lost, fallen off the bus"

	var w deviceWatch
	steps := []struct {
		name    string
		devs    []mps.Device
		changes []deviceChange
		replan  string
	}{
		{"the start says what it found", []mps.Device{ok("gpu0"), ok("gpu1"), failed("gpu2", "no handle")}, nil, ""},
		{"nothing changed", []mps.Device{ok("gpu0"), ok("gpu1"), failed("gpu2", "no handle")}, nil, ""},
		{"degraded is not failed", []mps.Device{degraded("gpu0"), ok("gpu1"), failed("gpu2", "no handle")}, nil, ""},
		{"a device without gpu-lets fails", []mps.Device{ok("gpu0"), failed("gpu1", lost), failed("gpu2", "no handle")},
			[]deviceChange{{device: "gpu1", failed: true, why: lost}}, ""},
		{"a device with gpu-lets fails", []mps.Device{failed("gpu0", lost), failed("gpu1", lost), failed("gpu2", "no handle")},
			[]deviceChange{{device: "gpu0", failed: true, why: lost}}, planDeviceFailed},
		{"a device comes back", []mps.Device{failed("gpu0", lost), ok("gpu1"), failed("gpu2", "no handle")},
			[]deviceChange{{device: "gpu1"}}, planDeviceBack},
	}
	for _, st := range steps {
		changes := w.observe(st.devs)
		require.Equal(t, st.changes, changes, st.name)
		require.Equal(t, st.replan, replanFor(changes, plan), st.name)
	}
	require.Equal(t, planDeviceFailed, replanFor([]deviceChange{{device: "gpu0", failed: true}, {device: "gpu1"}}, plan), "a failure comes first")
	require.Empty(t, replanFor([]deviceChange{{device: "gpu0", failed: true}}, nil), "no plan in force")
	require.Equal(t, "gpu0 failed: "+lost+"; the models placed on it are planned onto the other devices",
		deviceChange{device: "gpu0", failed: true, why: lost}.words())
	require.Equal(t, "gpu1 serves again; planned with the others", deviceChange{device: "gpu1"}.words())
}
