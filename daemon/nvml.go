package daemon

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// newNVML is the NVML library: go-nvml dlopens libnvidia-ml.so.1 at Init,
// which the device layer calls only when the configuration may use GPUs.
func newNVML() nvml.Interface { return nvml.New() }
