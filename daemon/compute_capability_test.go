package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/mps"
)

// TestServedCapabilities: the compute capabilities that choose a model's
// file are those of the GPUs serve would serve on, as its devices setting
// selects them.
func TestServedCapabilities(t *testing.T) {
	gpus := []mps.Device{
		{ID: "gpu0", Index: 0, Kind: mps.KindNVIDIA, UUID: "GPU-aaa", ComputeCapability: "8.0", Health: mps.HealthOK},
		{ID: "gpu1", Index: 1, Kind: mps.KindNVIDIA, UUID: "GPU-bbb", ComputeCapability: "9.0", Health: mps.HealthOK},
	}
	for _, tc := range []struct {
		name    string
		devices config.Devices
		gpus    []mps.Device
		want    []string
	}{
		{"auto: every GPU", config.Devices{Mode: config.DevicesAuto}, gpus, []string{"8.0", "9.0"}},
		{"auto without a GPU: the CPU", config.Devices{Mode: config.DevicesAuto}, nil, nil},
		{"the CPU alone", config.Devices{Mode: config.DevicesCPU}, gpus, nil},
		{"the second GPU", config.Devices{Mode: config.DevicesList, List: []config.DeviceEntry{{Kind: config.KindNvidia, GPUs: []string{"1"}}}}, gpus, []string{"9.0"}},
		{"the first by UUID, and the CPU", config.Devices{Mode: config.DevicesList, List: []config.DeviceEntry{{Kind: config.KindCPU}, {Kind: config.KindNvidia, GPUs: []string{"GPU-aaa"}}}}, gpus, []string{"8.0"}},
		{"emulated GPUs", config.Devices{Mode: config.DevicesList, List: []config.DeviceEntry{{Kind: config.KindEmulated, Profiles: "igniter-v100", Count: 2}}}, gpus, nil},
		{"a GPU the list names that is not there: all of them", config.Devices{Mode: config.DevicesList, List: []config.DeviceEntry{{Kind: config.KindNvidia, GPUs: []string{"7"}}}}, gpus, []string{"8.0", "9.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Devices = tc.devices
			require.Equal(t, tc.want, ServedCapabilities(cfg, tc.gpus))
		})
	}
}
