package daemon

import (
	"fmt"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/refset"
)

// DeviceSpec turns the configuration into the device layer's spec. Emulated
// GPUs without a memory size take their reference set's.
func DeviceSpec(cfg config.Config) (mps.Spec, error) {
	spec := mps.Spec{
		Mode:             mps.Mode(cfg.Devices.Mode),
		Backend:          mps.Backend(cfg.Partitioning.Backend),
		Sizes:            cfg.Partitioning.Sizes,
		MaxGpuletsPerGPU: cfg.Partitioning.MaxGPUletsPerGPU,
		RuntimeDir:       cfg.RuntimeDir,
		MPS: mps.MPSSpec{
			ControlBinary:  cfg.MPS.ControlBinary,
			PipeDirectory:  cfg.MPS.PipeDirectory,
			SetComputeMode: cfg.MPS.SetComputeMode,
			Foreground:     cfg.MPS.Foreground,
		},
	}
	if cfg.Partitioning.Backend != "mps" {
		spec.Sizes = nil // mig and none make their own sizes
	}
	for i, d := range cfg.Devices.List {
		e := mps.Entry{Kind: mps.Kind(d.Kind), GPUs: d.GPUs, Profiles: d.Profiles, Count: d.Count, MemoryGB: d.MemoryGB, TimeScale: d.TimeScale}
		if d.Kind == config.KindEmulated {
			set, err := refset.Load(d.Profiles)
			if err != nil {
				return mps.Spec{}, fmt.Errorf("devices[%d].profiles: %w (known: %v)", i, err, refset.Names())
			}
			if e.MemoryGB == 0 {
				e.MemoryGB = set.MemoryGiB
			}
		}
		spec.Entries = append(spec.Entries, e)
	}
	return spec, nil
}
