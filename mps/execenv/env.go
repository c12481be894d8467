package execenv

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/mps/cpushare"
)

// Variable names the daemon sets for an executor.
const (
	// VarDevice is the device id ("gpu0", "cpu", "emu1").
	VarDevice = "GPULETD_DEVICE"
	// VarKind is the device kind: nvidia, cpu or emulated.
	VarKind = "GPULETD_DEVICE_KIND"
	// VarType is the device type profiles are keyed by ("h100-80gb-hbm3", "cpu", "igniter-v100").
	VarType = "GPULETD_DEVICE_TYPE"
	// VarPartition is the partition mechanism: mps, mig, none or cpu.
	VarPartition = "GPULETD_PARTITION"
	// VarSize is the gpu-let size in percent of its device.
	VarSize = "GPULETD_GPULET_SIZE"
	// VarCPUCores is the core list a CPU gpu-let is pinned to ("0,1").
	VarCPUCores = "GPULETD_CPU_CORES"
	// VarIntraOpThreads is ONNX Runtime's intra-op thread count on a CPU gpu-let.
	VarIntraOpThreads = "GPULETD_INTRA_OP_THREADS"
	// VarEmulated names the emulated device's physics (a reference profile set).
	VarEmulated = "GPULETD_EMULATED_DEVICE"
	// VarMemoryMB is the device memory of an emulated device in MiB (0: unknown).
	VarMemoryMB = "GPULETD_DEVICE_MEMORY_MB"
	// VarCUDAVisibleDevices selects the GPU or MIG instance ("GPU-…", "MIG-…"); empty hides all GPUs.
	VarCUDAVisibleDevices = "CUDA_VISIBLE_DEVICES"
	// VarMPSPipeDirectory is where the MPS control daemon's pipes are.
	VarMPSPipeDirectory = "CUDA_MPS_PIPE_DIRECTORY"
	// VarMPSActiveThreadPercentage is the MPS share of the GPU's SMs.
	VarMPSActiveThreadPercentage = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
	// VarMPSPinnedDeviceMemLimit caps the device memory an MPS client may pin.
	VarMPSPinnedDeviceMemLimit = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"
	// VarGPUMemoryLimitMB caps the GPU memory the engine's arena may take
	// (MiB), as the plan sets it.
	VarGPUMemoryLimitMB = "GPULETD_GPU_MEMORY_LIMIT_MB"
)

// Kinds and partition mechanisms as written in VarKind and VarPartition.
const (
	KindNVIDIA   = "nvidia"
	KindCPU      = "cpu"
	KindEmulated = "emulated"

	PartitionMPS  = "mps"
	PartitionMIG  = "mig"
	PartitionNone = "none"
	PartitionCPU  = "cpu"
)

// ErrBadEnv: the environment does not describe a usable device.
var ErrBadEnv = errors.New("bad executor device environment")

// Env is what an executor learns about its device from its environment.
type Env struct {
	DeviceID  string
	Kind      string
	Type      string
	Partition string
	// Size is the gpu-let size in percent of the device.
	Size int
	// VisibleDevices is CUDA_VISIBLE_DEVICES for nvidia devices.
	VisibleDevices string
	// MPSPipeDir and ActiveThreadPercentage are set for MPS gpu-lets.
	MPSPipeDir             string
	ActiveThreadPercentage int
	// PinnedMemMB caps the device memory of an MPS client in MiB; 0: no cap.
	PinnedMemMB int
	// MemoryLimitMB caps the engine's GPU memory arena in MiB; 0: no cap.
	MemoryLimitMB int
	// Cores and IntraOpThreads are set for CPU gpu-lets.
	Cores          []int
	IntraOpThreads int
	// Emulated names the physics of an emulated device.
	Emulated string
	// MemoryMB is an emulated device's memory in MiB; 0: unknown.
	MemoryMB int
}

// Encode writes the environment as KEY=value pairs, sorted by key. Variables
// that do not apply to the kind are left out, except that CPU and emulated
// gpu-lets get an empty CUDA_VISIBLE_DEVICES so they can never touch a GPU.
func (e Env) Encode() []string {
	m := map[string]string{
		VarDevice:    e.DeviceID,
		VarKind:      e.Kind,
		VarType:      e.Type,
		VarPartition: e.Partition,
		VarSize:      strconv.Itoa(e.Size),
	}
	switch e.Kind {
	case KindNVIDIA:
		m[VarCUDAVisibleDevices] = e.VisibleDevices
		if e.MemoryLimitMB > 0 {
			m[VarGPUMemoryLimitMB] = strconv.Itoa(e.MemoryLimitMB)
		}
		// MPS gpu-lets, and MIG gpu-lets that share their instance through
		// the instance's own MPS control daemon.
		if e.Partition == PartitionMPS || (e.Partition == PartitionMIG && e.MPSPipeDir != "") {
			m[VarMPSPipeDirectory] = e.MPSPipeDir
			m[VarMPSActiveThreadPercentage] = strconv.Itoa(e.ActiveThreadPercentage)
			if e.PinnedMemMB > 0 {
				// Device ordinal 0 is the one GPU CUDA_VISIBLE_DEVICES leaves visible.
				m[VarMPSPinnedDeviceMemLimit] = fmt.Sprintf("0=%dM", e.PinnedMemMB)
			}
		}
	case KindCPU:
		m[VarCUDAVisibleDevices] = ""
		m[VarCPUCores] = cpushare.FormatList(e.Cores)
		m[VarIntraOpThreads] = strconv.Itoa(e.IntraOpThreads)
	case KindEmulated:
		m[VarCUDAVisibleDevices] = ""
		m[VarEmulated] = e.Emulated
		m[VarMemoryMB] = strconv.Itoa(e.MemoryMB)
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// Decode reads the environment through lookup (os.LookupEnv in an executor)
// and checks that it describes one usable device.
func Decode(lookup func(string) (string, bool)) (Env, error) {
	var e Env
	var errs []error
	get := func(name string, required bool) string {
		v, ok := lookup(name)
		if required && (!ok || v == "") {
			errs = append(errs, fmt.Errorf("%s is not set", name))
		}
		return v
	}
	num := func(name string, required bool, lo, hi int) int {
		s := get(name, required)
		if s == "" {
			return 0
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			errs = append(errs, fmt.Errorf("%s=%q: want a whole number in %d..%d", name, s, lo, hi))
		}
		return n
	}
	e.DeviceID = get(VarDevice, true)
	e.Kind = get(VarKind, true)
	e.Type = get(VarType, false)
	e.Partition = get(VarPartition, true)
	e.Size = num(VarSize, true, 1, 100)
	switch e.Partition {
	case "", PartitionMPS, PartitionMIG, PartitionNone, PartitionCPU:
	default:
		errs = append(errs, fmt.Errorf("%s=%q: want mps, mig, none or cpu", VarPartition, e.Partition))
	}
	switch e.Kind {
	case KindNVIDIA:
		e.VisibleDevices = get(VarCUDAVisibleDevices, true)
		e.MemoryLimitMB = num(VarGPUMemoryLimitMB, false, 0, 1<<30)
		_, migMPS := lookup(VarMPSPipeDirectory)
		if e.Partition == PartitionMPS || (e.Partition == PartitionMIG && migMPS) {
			e.MPSPipeDir = get(VarMPSPipeDirectory, true)
			e.ActiveThreadPercentage = num(VarMPSActiveThreadPercentage, true, 1, 100)
			if s := get(VarMPSPinnedDeviceMemLimit, false); s != "" {
				mb, ok := strings.CutPrefix(s, "0=")
				n, err := strconv.Atoi(strings.TrimSuffix(mb, "M"))
				if !ok || err != nil || n <= 0 || !strings.HasSuffix(mb, "M") {
					errs = append(errs, fmt.Errorf("%s=%q: want 0=<MiB>M", VarMPSPinnedDeviceMemLimit, s))
				}
				e.PinnedMemMB = n
			}
		}
	case KindCPU:
		cores, err := cpushare.ParseList(get(VarCPUCores, true))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", VarCPUCores, err))
		}
		e.Cores = cores
		e.IntraOpThreads = num(VarIntraOpThreads, true, 1, 1<<16)
	case KindEmulated:
		e.Emulated = get(VarEmulated, true)
		e.MemoryMB = num(VarMemoryMB, false, 0, 1<<30)
	case "":
	default:
		errs = append(errs, fmt.Errorf("%s=%q: want nvidia, cpu or emulated", VarKind, e.Kind))
	}
	if len(errs) > 0 {
		return Env{}, fmt.Errorf("decode executor environment: %w: %w", ErrBadEnv, errors.Join(errs...))
	}
	return e, nil
}

// ApplyCPU pins the current process to the cores of a CPU gpu-let; for other
// kinds it does nothing.
func (e Env) ApplyCPU() error {
	if e.Kind != KindCPU {
		return nil
	}
	return cpushare.Apply(e.Cores)
}
