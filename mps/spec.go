package mps

import (
	"fmt"
	"math"
	"time"
)

// Mode says which devices to serve on.
type Mode string

// Device modes (the config's `devices:` word, or a list).
const (
	// ModeAuto: every NVIDIA GPU NVML finds, else the CPU.
	ModeAuto Mode = "auto"
	// ModeNVIDIA: NVIDIA GPUs only; none is an error (ErrNoNVIDIA).
	ModeNVIDIA Mode = "nvidia"
	// ModeCPU: the CPU only.
	ModeCPU Mode = "cpu"
	// ModeList: the devices in Spec.Entries.
	ModeList Mode = "list"
)

// DefaultMPSSizes are the gpu-let sizes of the gpu-let paper's MPS
// partitions (DESIGN.md §3), used when Spec.Sizes is empty.
var DefaultMPSSizes = []int{20, 40, 50, 60, 80, 100}

// DefaultMaxGpulets is the default cap of gpu-lets per GPU: two, as in the
// gpu-let paper.
const DefaultMaxGpulets = 2

// Spec is the device part of the configuration, as the daemon derives it
// from its config file.
type Spec struct {
	// Mode selects the devices; ModeList uses Entries.
	Mode Mode
	// Entries are the listed devices (ModeList).
	Entries []Entry
	// Backend partitions GPUs: BackendMPS (default), BackendMIG or
	// BackendNone. A GPU that is in MIG mode is partitioned with MIG whatever
	// this says.
	Backend Backend
	// Sizes are the gpu-let sizes in percent the planner may use. Empty means
	// every size the backend makes (DefaultMPSSizes for MPS). A size the
	// backend cannot make is an error.
	Sizes []int
	// MaxGpuletsPerGPU caps gpu-lets per device; 0 means DefaultMaxGpulets.
	MaxGpuletsPerGPU int
	// RuntimeDir holds per-GPU MPS directories: <RuntimeDir>/mps/<id>/{pipe,log}.
	RuntimeDir string
	// MPS configures the MPS control daemons.
	MPS MPSSpec
}

// Entry is one element of a device list.
type Entry struct {
	// Kind is KindNVIDIA, KindCPU or KindEmulated.
	Kind Kind
	// GPUs selects NVIDIA GPUs by NVML index or UUID (a unique prefix is
	// enough, as for CUDA_VISIBLE_DEVICES); empty means all.
	GPUs []string
	// Profiles names the reference profile set an emulated GPU takes its
	// physics from, e.g. "igniter-v100". This package only passes the name on.
	Profiles string
	// Count is how many emulated GPUs of the set.
	Count int
	// MemoryGB is each emulated GPU's memory; 0 is unknown (the daemon may
	// fill it from the set before building the inventory).
	MemoryGB float64
	// TimeScale is how many times slower than its set an emulated GPU runs;
	// 0 is 1. This package only passes it on (Device.TimeScale).
	TimeScale float64
}

// MPSSpec configures MPS control daemons. Zero durations take defaults.
type MPSSpec struct {
	// ControlBinary is the nvidia-cuda-mps-control program; "" is found on PATH.
	ControlBinary string
	// PipeDirectory names a control daemon that already runs (shared by all
	// GPUs); gpuletd then neither starts nor stops one. Empty: gpuletd starts
	// one per GPU under RuntimeDir.
	PipeDirectory string
	// SetComputeMode lets gpuletd put GPUs into EXCLUSIVE_PROCESS before
	// starting MPS (and restore the old mode after). Off by default.
	SetComputeMode bool
	// Foreground runs the control daemon as a child (`-f`) instead of letting
	// it daemonize (`-d`), so that its death is seen at once.
	Foreground bool
	// HealthInterval is the time between health queries (default 5s).
	HealthInterval time.Duration
	// QueryTimeout bounds one control command (default 5s).
	QueryTimeout time.Duration
	// StartTimeout bounds a start until the daemon answers (default 15s).
	StartTimeout time.Duration
	// BackoffMin and BackoffMax bound the exponential restart backoff
	// (defaults 1s and 1m).
	BackoffMin time.Duration
	BackoffMax time.Duration
}

// withDefaults fills zero values.
func (s MPSSpec) withDefaults() MPSSpec {
	if s.ControlBinary == "" {
		s.ControlBinary = "nvidia-cuda-mps-control"
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&s.HealthInterval, 5*time.Second)
	def(&s.QueryTimeout, 5*time.Second)
	def(&s.StartTimeout, 15*time.Second)
	def(&s.BackoffMin, time.Second)
	def(&s.BackoffMax, time.Minute)
	if s.BackoffMax < s.BackoffMin {
		s.BackoffMax = s.BackoffMin
	}
	return s
}

// invalid builds an ErrInvalidSpec error naming a field and its value.
func invalid(field string, value any, why string, args ...any) error {
	return fmt.Errorf("check %s %v: %w: %s", field, value, ErrInvalidSpec, fmt.Sprintf(why, args...))
}

// check validates what can be checked without looking at the hardware.
func (s Spec) check() error {
	switch s.Mode {
	case ModeAuto, ModeNVIDIA, ModeCPU:
		if len(s.Entries) > 0 {
			return invalid("devices", s.Mode, "a device list needs mode %q", ModeList)
		}
	case ModeList:
		if len(s.Entries) == 0 {
			return invalid("devices", "[]", "the device list is empty")
		}
	default:
		return invalid("devices", fmt.Sprintf("%q", s.Mode), "want auto, nvidia, cpu or a list")
	}
	switch s.Backend {
	case "", BackendMPS, BackendMIG, BackendNone:
	default:
		return invalid("partitioning.backend", fmt.Sprintf("%q", s.Backend), "want mps, mig or none")
	}
	for i, sz := range s.Sizes {
		if sz < 1 || sz > 100 {
			return invalid(fmt.Sprintf("partitioning.sizes[%d]", i), sz, "a size is a percentage in 1..100")
		}
	}
	if s.MaxGpuletsPerGPU < 0 || s.MaxGpuletsPerGPU > MaxMPSClients {
		return invalid("partitioning.max_gpulets_per_gpu", s.MaxGpuletsPerGPU, "want 1..%d", MaxMPSClients)
	}
	cpus := 0
	for i, e := range s.Entries {
		f := fmt.Sprintf("devices[%d]", i)
		switch e.Kind {
		case KindNVIDIA:
			if e.Profiles != "" || e.Count != 0 || e.MemoryGB != 0 || e.TimeScale != 0 {
				return invalid(f, e.Kind, "profiles, count, memory_gb and time_scale are for emulated devices")
			}
		case KindCPU:
			if cpus++; cpus > 1 {
				return invalid(f+".kind", e.Kind, "the CPU is listed twice")
			}
			if len(e.GPUs) > 0 || e.Profiles != "" || e.Count != 0 || e.MemoryGB != 0 || e.TimeScale != 0 {
				return invalid(f, e.Kind, "the CPU entry takes no other field")
			}
		case KindEmulated:
			if e.Profiles == "" {
				return invalid(f+".profiles", `""`, "an emulated device needs a reference profile set")
			}
			if e.Count < 1 {
				return invalid(f+".count", e.Count, "want at least 1")
			}
			if e.MemoryGB < 0 {
				return invalid(f+".memory_gb", e.MemoryGB, "must not be negative")
			}
			if e.TimeScale < 0 || math.IsNaN(e.TimeScale) || math.IsInf(e.TimeScale, 0) {
				return invalid(f+".time_scale", e.TimeScale, "want 0 (the set's speed) or a positive factor")
			}
			if len(e.GPUs) > 0 {
				return invalid(f+".gpus", e.GPUs, "gpus is for nvidia devices")
			}
		default:
			return invalid(f+".kind", fmt.Sprintf("%q", e.Kind), "want nvidia, cpu or emulated")
		}
	}
	return nil
}

// backend is the GPU backend with its default.
func (s Spec) backend() Backend {
	if s.Backend == "" {
		return BackendMPS
	}
	return s.Backend
}

// maxGpulets is the per-device cap with its default.
func (s Spec) maxGpulets() int {
	if s.MaxGpuletsPerGPU == 0 {
		return DefaultMaxGpulets
	}
	return s.MaxGpuletsPerGPU
}
