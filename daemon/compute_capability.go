package daemon

import (
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/mps"
)

// ServedCapabilities are the compute capabilities of the NVIDIA GPUs among
// gpus (NVML's) that serve, configured cfg, would serve on — those that
// choose a model file of a config.pbtxt's cc_model_filenames; all of gpus'
// where cfg's devices cannot be told from them.
func ServedCapabilities(cfg config.Config, gpus []mps.Device) []string {
	spec, err := DeviceSpec(cfg)
	if err != nil {
		return mps.ComputeCapabilities(gpus)
	}
	// One core stands for the CPU: its device carries no capability.
	inv, err := mps.BuildInventory(spec, mps.Sources{GPUs: gpus, CPUs: []int{0}}, zap.NewNop())
	if err != nil {
		return mps.ComputeCapabilities(gpus)
	}
	return mps.ComputeCapabilities(inv.Devices)
}

// CapabilitiesHere are ServedCapabilities of this machine's NVIDIA GPUs
// (none without a driver).
func CapabilitiesHere(cfg config.Config) []string {
	return ServedCapabilities(cfg, mps.ReadDriver(newNVML(), zap.NewNop()).GPUs)
}
