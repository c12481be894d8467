package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/mps"
)

// TestDeviceSpecCarriesTheMPSSettings: the mps section reaches the device
// layer as configured (a setting dropped on the way would leave the
// operator's choice without effect and without a word).
func TestDeviceSpecCarriesTheMPSSettings(t *testing.T) {
	cfg := config.Default()
	spec, err := DeviceSpec(cfg)
	require.NoError(t, err)
	require.Equal(t, mps.MPSSpec{ControlBinary: "nvidia-cuda-mps-control"}, spec.MPS)

	cfg.MPS = config.MPS{ControlBinary: "/opt/nvidia/bin/nvidia-cuda-mps-control", PipeDirectory: "/tmp/mps", SetComputeMode: true, Foreground: true}
	spec, err = DeviceSpec(cfg)
	require.NoError(t, err)
	require.Equal(t, mps.MPSSpec{ControlBinary: "/opt/nvidia/bin/nvidia-cuda-mps-control", PipeDirectory: "/tmp/mps", SetComputeMode: true, Foreground: true}, spec.MPS)
	require.Equal(t, "/run/gpuletd", spec.RuntimeDir)
}
