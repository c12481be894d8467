package mps

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// setExclusiveProcess puts a GPU into EXCLUSIVE_PROCESS, the compute mode
// NVIDIA recommends under MPS (only the MPS server then holds a context on
// the GPU), and returns the mode it had. It needs root; gpuletd does it only
// when the configuration allows.
func setExclusiveProcess(h nvml.Device) (nvml.ComputeMode, error) {
	prev, err := call("get compute mode", h.GetComputeMode)
	if err != nil {
		return 0, fmt.Errorf("set compute mode: %w", err)
	}
	if prev == nvml.COMPUTEMODE_EXCLUSIVE_PROCESS {
		return prev, nil
	}
	if err := guard("set compute mode EXCLUSIVE_PROCESS", func() nvml.Return {
		return h.SetComputeMode(nvml.COMPUTEMODE_EXCLUSIVE_PROCESS)
	}); err != nil {
		return prev, fmt.Errorf("set compute mode: %w", err)
	}
	return prev, nil
}

// restoreComputeMode puts back the mode setExclusiveProcess found.
func restoreComputeMode(h nvml.Device, mode nvml.ComputeMode) error {
	if mode == nvml.COMPUTEMODE_EXCLUSIVE_PROCESS {
		return nil
	}
	if err := guard("restore compute mode", func() nvml.Return { return h.SetComputeMode(mode) }); err != nil {
		return fmt.Errorf("restore compute mode %d: %w", mode, err)
	}
	return nil
}

// computeModeName is NVML's compute mode as gpuletd writes it.
func computeModeName(m nvml.ComputeMode) string {
	switch m {
	case nvml.COMPUTEMODE_DEFAULT:
		return "default"
	case nvml.COMPUTEMODE_EXCLUSIVE_THREAD:
		return "exclusive_thread"
	case nvml.COMPUTEMODE_PROHIBITED:
		return "prohibited"
	case nvml.COMPUTEMODE_EXCLUSIVE_PROCESS:
		return "exclusive_process"
	}
	return fmt.Sprintf("mode-%d", m)
}
