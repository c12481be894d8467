package mps

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
)

// Driver is what NVML says about the NVIDIA driver and its GPUs.
type Driver struct {
	// Loaded is true when NVML initialised; Error says why not.
	Loaded bool   `json:"loaded"`
	Error  string `json:"error,omitempty"`
	// Version is the driver's; NVML and CUDA the library's and the newest
	// CUDA the driver supports ("13.0").
	Version string `json:"version,omitempty"`
	NVML    string `json:"nvml_version,omitempty"`
	CUDA    string `json:"cuda_version,omitempty"`
	// GPUs are the GPUs NVML lists.
	GPUs []Device `json:"gpus"`
}

// ReadDriver initialises NVML, reads the driver's versions and its GPUs and
// shuts NVML down again. Without a driver it says so in Error.
func ReadDriver(lib nvml.Interface, log *zap.Logger) Driver {
	d := Driver{GPUs: []Device{}}
	if lib == nil {
		d.Error = "no NVML library given"
		return d
	}
	if err := guard("init NVML", lib.Init); err != nil {
		d.Error = err.Error() + " (is the NVIDIA driver installed? libnvidia-ml.so.1 must be loadable)"
		return d
	}
	defer func() { _ = guard("shut down NVML", lib.Shutdown) }()
	d.Loaded = true
	d.Version, _ = call("get driver version", lib.SystemGetDriverVersion)
	d.NVML, _ = call("get NVML version", lib.SystemGetNVMLVersion)
	if v, err := call("get CUDA driver version", lib.SystemGetCudaDriverVersion_v2); err == nil {
		d.CUDA = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	gpus, err := Discover(lib, log)
	if err != nil {
		d.Error = err.Error()
	}
	if gpus != nil {
		d.GPUs = gpus
	}
	return d
}
