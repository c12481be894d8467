package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/internal/bytefmt"
	"github.com/gpulet/gpuletd/mps"
)

// adminDevice is one device of the status.
type adminDevice struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Type    string `json:"type"`
	Backend string `json:"backend"`
	Health  string `json:"health"`
	// HealthDetail says why a device is degraded or failed.
	HealthDetail string `json:"health_detail"`
	// MemoryTotal and MemoryFree are the driver's, on an NVIDIA GPU.
	MemoryTotal uint64 `json:"memory_total"`
	MemoryFree  uint64 `json:"memory_free"`
	// Cores are the CPU device's cores; CPULimit the cgroup's CPU limit
	// that narrowed them from OnlineCores, set by CPULimitOf.
	Cores       []int   `json:"cores"`
	CPULimit    float64 `json:"cpu_limit"`
	CPULimitOf  string  `json:"cpu_limit_of"`
	OnlineCores int     `json:"online_cores"`
	// Utilization and Power are the driver's, on an NVIDIA GPU that
	// reports them.
	Utilization *mps.Utilization `json:"utilization"`
	Power       *mps.Power       `json:"power"`
	MIG         *struct {
		Instances []struct {
			Profile    string `json:"profile"`
			UUID       string `json:"uuid"`
			Leased     int    `json:"leased"`
			MPSPipeDir string `json:"mps_pipe_dir"`
		} `json:"instances"`
	} `json:"mig"`
}

// cpuLimitText says that the CPU device holds fewer cores than this
// machine lets gpuletd run on, because its cgroup's CPU limit pays for no
// more; "" otherwise.
func (d adminDevice) cpuLimitText() string {
	if d.Kind != "cpu" || d.CPULimit <= 0 {
		return ""
	}
	return cpuLimitWords(d.ID, len(d.Cores), d.OnlineCores, d.CPULimit) + " (" + d.CPULimitOf + ")"
}

// cpuLimitWords says that the CPU device id holds cores of online cores,
// the whole cores its cgroup's CPU limit of limit CPUs pays for (gpuletd
// status and doctor).
func cpuLimitWords(id string, cores, online int, limit float64) string {
	return fmt.Sprintf("%s: %d of %d cores, the whole cores its cgroup's CPU limit of %s CPUs pays for",
		id, cores, online, strconv.FormatFloat(limit, 'f', -1, 64))
}

// loadText says how busy an NVIDIA GPU is and what it draws, as the
// driver reports them ("gpu0: 43% utilized, drawing 312 W of 700 W"), as
// the admin page does; "" for a device that reports neither.
func (d adminDevice) loadText() string {
	var parts []string
	if u := d.Utilization; u != nil {
		parts = append(parts, fmt.Sprintf("%d%% utilized", u.GPU))
	}
	if p := d.Power; p != nil {
		w := "drawing " + strconv.FormatFloat(p.Watts, 'f', 0, 64) + " W"
		if p.LimitWatts > 0 {
			w += " of " + strconv.FormatFloat(p.LimitWatts, 'f', 0, 64) + " W"
		}
		parts = append(parts, w)
	}
	if len(parts) == 0 {
		return ""
	}
	return d.ID + ": " + strings.Join(parts, ", ")
}

// memoryText is a GPU's memory in use and its total in whole GiB
// ("12/80GiB"), as the driver says or, on an emulated GPU, as its
// executors' loads hold it; for the CPU, what the plan places on it and
// what its models may hold ("1.4/3.9GiB"); "-" for other devices.
func (d adminDevice) memoryText(cpu *adminCPUMemory) string {
	gib := func(b uint64, prec int) string { return strconv.FormatFloat(float64(b)/(1<<30), 'f', prec, 64) }
	switch {
	case d.Kind == "cpu" && cpu != nil && cpu.Models > 0:
		return gib(uint64(cpu.Placed), 1) + "/" + gib(uint64(cpu.Models), 1) + "GiB"
	case d.Kind != "nvidia" && d.Kind != "emulated" || d.MemoryTotal == 0:
		return "-"
	}
	return gib(d.MemoryTotal-min(d.MemoryFree, d.MemoryTotal), 0) + "/" + gib(d.MemoryTotal, 0) + "GiB"
}

// adminCPUMemory is what bounds the models of the CPU device (host memory,
// or gpuletd's memory limit, less the daemon's peak) and what the plan
// places there.
type adminCPUMemory struct {
	Models int64  `json:"models_bytes"` // 0: nothing bounds it
	Placed int64  `json:"placed_bytes"`
	From   string `json:"from"`
}

// words says it in the status's header.
func (c *adminCPUMemory) words() string {
	if c.Models <= 0 {
		return "models on the CPU: " + bytefmt.Size(c.Placed) + " placed; " + c.From
	}
	return fmt.Sprintf("models on the CPU: %s placed of the %s they may hold (%s)", bytefmt.Size(c.Placed), bytefmt.Size(c.Models), c.From)
}

// adminGpulet is one running gpu-let of the status.
type adminGpulet struct {
	ID        string           `json:"id"`
	Device    string           `json:"device"`
	Size      int              `json:"size"`
	State     string           `json:"state"`
	PID       int              `json:"pid"`
	Restarts  int              `json:"restarts"`
	BusyRatio float64          `json:"busy_ratio"`
	Policy    string           `json:"policy"`
	Memory    *adminMemory     `json:"memory"`
	Models    []adminPlacement `json:"models"`
	NextTry   *time.Time       `json:"next_try"`      // while its dead executor waits to be started again
	Stalled   *time.Time       `json:"stalled_since"` // while its executor is silent (state "stalled")
}

// adminMemory is what a gpu-let's executor holds.
type adminMemory struct {
	HostBytes   int64 `json:"host_bytes"`
	DeviceBytes int64 `json:"device_bytes"`
}

// memoryText is a gpu-let's MEMORY cell: the GPU memory its executor holds
// where NVML lists it, else its resident memory; "-" without a process.
func (g adminGpulet) memoryText() string {
	switch m := g.Memory; {
	case m == nil:
		return "-"
	case m.DeviceBytes > 0:
		return bytefmt.Size(m.DeviceBytes) + " GPU"
	default:
		return bytefmt.Size(m.HostBytes)
	}
}
