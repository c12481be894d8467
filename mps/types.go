package mps

import (
	"fmt"
	"maps"
	"slices"
)

// Kind is what a device is.
type Kind string

// Device kinds.
const (
	KindNVIDIA   Kind = "nvidia"
	KindCPU      Kind = "cpu"
	KindEmulated Kind = "emulated"
)

// Backend is how a device is cut into gpu-lets.
type Backend string

// Partition backends.
const (
	// BackendMPS: MPS active-thread percentages, any size 1..100.
	BackendMPS Backend = "mps"
	// BackendMIG: MIG instances of the GPU's profiles.
	BackendMIG Backend = "mig"
	// BackendNone: whole devices, temporal sharing only.
	BackendNone Backend = "none"
	// BackendCPU: disjoint sets of whole cores.
	BackendCPU Backend = "cpu"
)

// Health is how a device is doing.
type Health string

// Health states.
const (
	HealthOK Health = "ok"
	// HealthDegraded: usable, with a problem the detail names (e.g. the MPS
	// control daemon is being restarted, a MIG mode change is pending).
	HealthDegraded Health = "degraded"
	// HealthFailed: not usable now.
	HealthFailed Health = "failed"
)

// MaxMPSClients is how many client processes one MPS server serves on Volta
// and newer GPUs (NVIDIA's MPS documentation, "Limitations": 48 clients per
// device). Each executor on an MPS gpu-let is one client.
const MaxMPSClients = 48

// Device is one device gpu-lets are made on, as the daemon, the planner and
// the web page see it.
type Device struct {
	// ID names the device inside gpuletd: "gpu<NVML index>", "cpu", "emu<k>".
	ID string `json:"id"`
	// Index is the NVML index of an nvidia device, the position among
	// emulated devices, 0 for the CPU.
	Index int  `json:"index"`
	Kind  Kind `json:"kind"`
	// Name is the product name ("NVIDIA H100 80GB HBM3", the CPU model).
	Name string `json:"name"`
	// Type keys latency profiles: the same for devices that behave alike
	// ("h100-80gb-hbm3", "cpu", the emulated set's name).
	Type string `json:"type"`
	// UUID is NVML's "GPU-…" for nvidia devices, a stable made-up one for
	// emulated devices, empty for the CPU.
	UUID string `json:"uuid,omitempty"`
	// MemoryTotal and MemoryFree are in bytes; 0 total means unknown.
	MemoryTotal uint64 `json:"memory_total"`
	MemoryFree  uint64 `json:"memory_free"`
	// ComputeCapability is "major.minor" for nvidia devices.
	ComputeCapability string `json:"compute_capability,omitempty"`
	// ComputeMode is an nvidia device's compute mode: default,
	// exclusive_process or prohibited; empty when NVML does not say.
	ComputeMode string `json:"compute_mode,omitempty"`
	// SMCount is the number of streaming multiprocessors; 0 is unknown (MPS
	// reports it to the executor, which the daemon may copy here).
	SMCount int `json:"sm_count,omitempty"`
	// Cores are the CPU cores of the CPU device.
	Cores []int `json:"cores,omitempty"`
	// CPULimit is the cgroup's CPU limit, in CPUs, that narrowed Cores to
	// its whole cores (0: none); CPULimitOf names the group that sets it,
	// and OnlineCores is how many cores the affinity mask allows.
	CPULimit    float64 `json:"cpu_limit,omitempty"`
	CPULimitOf  string  `json:"cpu_limit_of,omitempty"`
	OnlineCores int     `json:"online_cores,omitempty"`
	// Emulated names the physics of an emulated device (a reference profile set).
	Emulated string `json:"emulated,omitempty"`
	// TimeScale is how many times slower than its set an emulated device
	// runs (LatencyScale); 0 for other devices and at the set's speed.
	TimeScale float64 `json:"time_scale,omitempty"`

	// Backend is how the device is cut into gpu-lets.
	Backend Backend `json:"backend"`
	// Sizes are the gpu-let sizes (percent) the planner may use, ascending.
	Sizes []int `json:"sizes"`
	// MaxGpulets caps the gpu-lets the planner puts on the device.
	MaxGpulets int `json:"max_gpulets"`

	Health       Health `json:"health"`
	HealthDetail string `json:"health_detail,omitempty"`
	// XidErrors counts the Xid errors the driver reported for the device
	// since the daemon started, by Xid (Manager watches for them).
	XidErrors map[uint64]int `json:"xid_errors,omitempty"`

	// MPSPipeDir is CUDA_MPS_PIPE_DIRECTORY for executors on an MPS-partitioned GPU.
	MPSPipeDir string `json:"mps_pipe_dir,omitempty"`
	// MPSLogDir is CUDA_MPS_LOG_DIRECTORY of a control daemon gpuletd starts.
	MPSLogDir string `json:"mps_log_dir,omitempty"`
	// Leased counts the gpu-lets leased on the device (Manager.Lease).
	Leased int `json:"leased"`
	// MIG is the MIG state of an nvidia device that supports MIG.
	MIG *MIGState `json:"mig,omitempty"`
	// Utilization is NVML's last-sample utilisation, nil when unknown.
	Utilization *Utilization `json:"utilization,omitempty"`
	// Power is the GPU's draw, limit and energy (readPower), nil when
	// NVML does not say.
	Power *Power `json:"power,omitempty"`
	// energyFrom is NVML's energy count, in millijoules, that Power's
	// energy counts from; energyCounted says whether it was read.
	energyFrom    uint64
	energyCounted bool
	// Processes are the compute processes NVML sees on the device.
	Processes []GPUProcess `json:"processes,omitempty"`
	// MPS is the state of the device's MPS control daemon, nil without one.
	MPS *MPSStatus `json:"mps,omitempty"`
}

// MIGState is a GPU's MIG mode and instances.
type MIGState struct {
	// Enabled is the current MIG mode; Pending the mode after the next GPU reset.
	Enabled bool `json:"enabled"`
	Pending bool `json:"pending"`
	// Profiles are the GPU-instance profiles the GPU supports.
	Profiles []MIGProfile `json:"profiles,omitempty"`
	// Instances are the compute instances, ordered by placement.
	Instances []MIGInstance `json:"instances,omitempty"`
}

// MIGInstance is one compute instance inside a GPU instance: what an executor
// on a MIG gpu-let runs on.
type MIGInstance struct {
	// GPUInstance and ComputeInstance are NVML's ids.
	GPUInstance     int `json:"gpu_instance"`
	ComputeInstance int `json:"compute_instance"`
	// Profile is the GPU-instance profile, e.g. "3g.40gb"; ProfileID NVML's id of it.
	Profile   string `json:"profile"`
	ProfileID int    `json:"profile_id"`
	// Slices is the compute slice count; Size the gpu-let size in percent.
	Slices int `json:"slices"`
	Size   int `json:"size"`
	// Start and Span are the instance's memory-slot placement.
	Start int `json:"start"`
	Span  int `json:"span"`
	// SMCount and MemoryMB come from the profile.
	SMCount  int    `json:"sm_count"`
	MemoryMB uint64 `json:"memory_mb"`
	// UUID is "MIG-…", what CUDA_VISIBLE_DEVICES takes; empty when NVML did not say.
	UUID string `json:"uuid,omitempty"`
	// Processes running on the instance.
	Processes []GPUProcess `json:"processes,omitempty"`
	// MPSPipeDir is the pipe directory of the MPS control daemon gpuletd
	// runs inside the instance; empty when none runs.
	MPSPipeDir string `json:"mps_pipe_dir,omitempty"`
	// Leased is the share of the instance leased to gpu-lets, percent.
	Leased int `json:"leased,omitempty"`
}

// Utilization is NVML's GPU and memory-controller utilisation in percent.
type Utilization struct {
	GPU    int `json:"gpu"`
	Memory int `json:"memory"`
}

// GPUProcess is one compute process on a GPU.
type GPUProcess struct {
	PID int `json:"pid"`
	// UsedMemory is in bytes; 0 when the driver does not say.
	UsedMemory uint64 `json:"used_memory"`
	// GPUInstance and ComputeInstance place the process on MIG; -1 when not on MIG or unknown.
	GPUInstance     int `json:"gpu_instance"`
	ComputeInstance int `json:"compute_instance"`
}

// Inventory is every device gpuletd serves on. It is a value: a snapshot
// the caller may keep and read freely.
type Inventory struct {
	Devices []Device `json:"devices"`
	// RuntimeDir is where MPS directories live (from the Spec).
	RuntimeDir string `json:"-"`
}

// Device finds a device by id.
func (inv Inventory) Device(id string) (Device, error) {
	for _, d := range inv.Devices {
		if d.ID == id {
			return d, nil
		}
	}
	return Device{}, fmt.Errorf("find device %q: %w (devices: %v)", id, ErrUnknownDevice, inv.IDs())
}

// IDs lists the device ids in order.
func (inv Inventory) IDs() []string {
	out := make([]string, len(inv.Devices))
	for i, d := range inv.Devices {
		out[i] = d.ID
	}
	return out
}

// Clone returns a deep copy.
func (inv Inventory) Clone() Inventory {
	out := Inventory{RuntimeDir: inv.RuntimeDir, Devices: make([]Device, len(inv.Devices))}
	for i, d := range inv.Devices {
		out.Devices[i] = d.clone()
	}
	return out
}

func (d Device) clone() Device {
	c := d
	c.Cores = slices.Clone(d.Cores)
	c.Sizes = slices.Clone(d.Sizes)
	c.Processes = slices.Clone(d.Processes)
	c.XidErrors = maps.Clone(d.XidErrors)
	if d.MIG != nil {
		m := *d.MIG
		m.Profiles = make([]MIGProfile, len(d.MIG.Profiles))
		for i, p := range d.MIG.Profiles {
			p.Starts = slices.Clone(p.Starts)
			m.Profiles[i] = p
		}
		m.Instances = make([]MIGInstance, len(d.MIG.Instances))
		for i, in := range d.MIG.Instances {
			in.Processes = slices.Clone(in.Processes)
			m.Instances[i] = in
		}
		c.MIG = &m
	}
	if d.Utilization != nil {
		u := *d.Utilization
		c.Utilization = &u
	}
	if d.Power != nil {
		p := *d.Power
		c.Power = &p
	}
	if d.MPS != nil {
		s := *d.MPS
		c.MPS = &s
	}
	return c
}

// LatencyScale is what every latency of the device's profiles is multiplied
// by: its TimeScale, 1 when it has none.
func (d Device) LatencyScale() float64 {
	if d.TimeScale > 0 {
		return d.TimeScale
	}
	return 1
}
