package mps

import (
	"fmt"
	"slices"

	"github.com/gpulet/gpuletd/mps/cpushare"
	"github.com/gpulet/gpuletd/mps/execenv"
)

// Gpulet is a gpu-let as the device layer needs it to start an executor.
type Gpulet struct {
	// ID names the gpu-let, for logs and as the owner of CPU cores.
	ID string
	// Device is the device id.
	Device string
	// Size is the share of the device in percent. On MIG, 0 takes the
	// instance's size.
	Size int
	// MIGInstance is the "MIG-…" UUID of the instance a MIG gpu-let runs on.
	MIGInstance string
	// Cores are the cores of a CPU gpu-let (Manager.Lease fills them).
	Cores []int
	// PinnedMemMB caps the device memory of an MPS client (MiB); 0: no cap.
	PinnedMemMB int
	// MIGShare is, on MIG, the MPS share of the instance in percent when
	// several gpu-lets share one instance through its MPS control daemon
	// (Manager.StartMIGMPS); 0: the gpu-let has the instance alone.
	MIGShare int
	// MemoryLimitMB caps the engine's GPU memory arena (MiB); 0: no cap.
	MemoryLimitMB int
	// Shared leases a CPU gpu-let's cores without taking them from the
	// gpu-lets that hold them: for a profile measured while the node serves
	// (the measurement and the serving executors then share those cores).
	Shared bool
	// TakeOver names CPU gpu-lets about to stop whose cores this one may
	// take when too few are free (cpushare.Allocator.Allocate's from): it
	// starts while they drain, sharing those cores until they stop.
	TakeOver []string
}

// migPercent is the share of its MIG instance the gpu-let leases: its
// MIGShare, or the whole instance.
func (g Gpulet) migPercent() int {
	if g.MIGShare == 0 {
		return 100
	}
	return g.MIGShare
}

// badGpulet builds an ErrBadGpulet error.
func badGpulet(g Gpulet, why string, args ...any) error {
	return fmt.Errorf("check gpu-let %s on %s: %w: %s", g.ID, g.Device, ErrBadGpulet, fmt.Sprintf(why, args...))
}

// ExecutorEnv is the environment an executor for g needs, as KEY=value
// pairs to add to its own (see package execenv for the names):
//
//   - MPS: CUDA_VISIBLE_DEVICES=<GPU UUID>, CUDA_MPS_PIPE_DIRECTORY,
//     CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=<size>, optionally
//     CUDA_MPS_PINNED_DEVICE_MEM_LIMIT;
//   - MIG: CUDA_VISIBLE_DEVICES=MIG-<uuid>;
//   - none: CUDA_VISIBLE_DEVICES=<GPU UUID>;
//   - CPU: GPULETD_CPU_CORES and GPULETD_INTRA_OP_THREADS (and no GPU);
//   - emulated: GPULETD_EMULATED_DEVICE=<set> and the size (and no GPU);
//
// and always GPULETD_DEVICE, GPULETD_DEVICE_KIND, GPULETD_DEVICE_TYPE,
// GPULETD_PARTITION and GPULETD_GPULET_SIZE. It checks that g fits its device.
func (inv Inventory) ExecutorEnv(g Gpulet) ([]string, error) {
	e, err := inv.executorEnv(g)
	if err != nil {
		return nil, err
	}
	return e.Encode(), nil
}

func (inv Inventory) executorEnv(g Gpulet) (execenv.Env, error) {
	d, err := inv.Device(g.Device)
	if err != nil {
		return execenv.Env{}, err
	}
	e := execenv.Env{DeviceID: d.ID, Kind: string(d.Kind), Type: d.Type, Partition: string(d.Backend), Size: g.Size}
	if g.PinnedMemMB < 0 || (g.PinnedMemMB > 0 && d.Backend != BackendMPS) {
		return e, badGpulet(g, "a pinned memory limit (%d MiB) needs an MPS gpu-let", g.PinnedMemMB)
	}
	if d.Backend != BackendMIG && (g.Size < 1 || g.Size > 100) {
		return e, badGpulet(g, "size %d: want 1..100", g.Size)
	}
	if d.Backend != BackendCPU && len(g.Cores) > 0 {
		return e, badGpulet(g, "cores are for CPU gpu-lets")
	}
	if g.MemoryLimitMB < 0 || (g.MemoryLimitMB > 0 && d.Kind != KindNVIDIA) {
		return e, badGpulet(g, "a GPU memory limit (%d MiB) needs an NVIDIA gpu-let", g.MemoryLimitMB)
	}
	e.MemoryLimitMB = g.MemoryLimitMB
	if d.Backend != BackendMIG && g.MIGShare != 0 {
		return e, badGpulet(g, "an MPS share of a MIG instance (%d%%) needs a MIG gpu-let", g.MIGShare)
	}
	if d.Backend != BackendMIG && g.MIGInstance != "" {
		return e, badGpulet(g, "MIG instance %s given, but %s is partitioned with %s", g.MIGInstance, d.ID, d.Backend)
	}
	switch d.Backend {
	case BackendMPS:
		if d.Kind == KindNVIDIA {
			if d.MPSPipeDir == "" {
				return e, badGpulet(g, "%s has no MPS pipe directory", d.ID)
			}
			e.VisibleDevices = d.UUID
			e.MPSPipeDir = d.MPSPipeDir
			e.ActiveThreadPercentage = g.Size
			e.PinnedMemMB = g.PinnedMemMB
		}
	case BackendNone:
		if g.Size != 100 {
			return e, badGpulet(g, "size %d: %s is not partitioned, only 100", g.Size, d.ID)
		}
		e.VisibleDevices = d.UUID
	case BackendMIG:
		in, err := findMIGInstance(d, g)
		if err != nil {
			return e, err
		}
		if g.Size == 0 {
			e.Size = in.Size
		} else if g.Size != in.Size {
			return e, badGpulet(g, "size %d: instance %s (%s) is %d%%", g.Size, in.UUID, in.Profile, in.Size)
		}
		e.VisibleDevices = in.UUID
		if g.MIGShare != 0 {
			if g.MIGShare < 1 || g.MIGShare > 100 {
				return e, badGpulet(g, "MPS share %d%% of instance %s: want 1..100", g.MIGShare, in.UUID)
			}
			if in.MPSPipeDir == "" {
				return e, badGpulet(g, "no MPS control daemon runs inside MIG instance %s", in.UUID)
			}
			e.MPSPipeDir = in.MPSPipeDir
			e.ActiveThreadPercentage = g.MIGShare
		}
	case BackendCPU:
		if len(g.Cores) == 0 {
			return e, badGpulet(g, "no cores (Manager.Lease allocates them)")
		}
		for _, c := range g.Cores {
			if !slices.Contains(d.Cores, c) {
				return e, badGpulet(g, "core %d is not one of %s's cores %s", c, d.ID, cpushare.FormatList(d.Cores))
			}
		}
		k, err := cpushare.CoresForSize(g.Size, len(d.Cores))
		if err != nil {
			return e, badGpulet(g, "%v", err)
		}
		if k != len(g.Cores) {
			return e, badGpulet(g, "size %d%% is %d core(s) of %d, got %d", g.Size, k, len(d.Cores), len(g.Cores))
		}
		e.Cores = slices.Clone(g.Cores)
		e.IntraOpThreads = len(g.Cores)
	}
	if d.Kind == KindEmulated {
		e.Emulated = d.Emulated
		e.MemoryMB = int(d.MemoryTotal >> 20)
	}
	return e, nil
}

// findMIGInstance finds the compute instance a MIG gpu-let names.
func findMIGInstance(d Device, g Gpulet) (MIGInstance, error) {
	if g.MIGInstance == "" {
		return MIGInstance{}, badGpulet(g, "a MIG gpu-let needs its instance's MIG-… UUID")
	}
	if d.MIG != nil {
		for _, in := range d.MIG.Instances {
			if in.UUID == g.MIGInstance && in.ComputeInstance >= 0 {
				return in, nil
			}
		}
	}
	return MIGInstance{}, badGpulet(g, "no MIG instance %s on %s", g.MIGInstance, d.ID)
}
