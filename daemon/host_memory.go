package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gpulet/gpuletd/internal/bytefmt"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/gpulet/gpuletd/internal/procfs"
	"github.com/gpulet/gpuletd/mps"
	"go.uber.org/zap"
)

// The CPU device's memory: what the models of its gpu-lets may hold.
//
// A model on a CPU gpu-let lives in host memory, in its executor, and the
// executors run in the daemon's memory cgroup. The planner bounds every
// device's gpu-lets by the device's memory (one copy of a model per
// executor); for the CPU that bound is the host's memory, or gpuletd's
// memory limit where its cgroup or one above it has a smaller one (systemd's
// MemoryMax=), less the most the daemon itself has held (its peak, which
// only grows: a bound that followed the daemon's memory from plan to plan
// would move a model near it in and out). Past it the kernel kills
// an executor for memory (executor_exit.go) and, at every plan, would kill
// it again; within it a model that needs more memory than the CPU has is
// refused with the reason, where an operator looks. A model's memory on
// the CPU is what its profile run measured (profileBook.memoryMB), less
// what its executor held before it loaded the model: that runtime (about
// 46 MB on the 2-vCPU VM, against 5–20 MB for a small model) is held once
// per executor, so the bound leaves out one for each gpu-let the CPU may
// have, and every model copy counts its own memory alone.

// hostMemory is what bounds the models on the CPU device, read at a plan.
type hostMemory struct {
	// TotalBytes is the host's memory (MemTotal); 0 unknown.
	TotalBytes int64 `json:"total_bytes,omitempty"`
	// LimitBytes is the tightest memory limit over the daemon's cgroup and
	// those above it, set by LimitOf; 0 none.
	LimitBytes int64  `json:"limit_bytes,omitempty"`
	LimitOf    string `json:"limit_of,omitempty"`
	// DaemonBytes is the most the daemon has held resident (VmHWM), left
	// out.
	DaemonBytes int64 `json:"daemon_bytes"`
	// ExecutorBytes is what one executor holds before it loads a model
	// (the most a profile run measured: store.ExecutorMemory), and
	// Executors how many the CPU runs at most (its max gpu-lets): both left
	// out; 0 when not measured (models measured before schema 5 count it
	// themselves).
	ExecutorBytes int64 `json:"executor_bytes,omitempty"`
	Executors     int   `json:"executors,omitempty"`
	// ModelsBytes is what the models of the CPU's gpu-lets may hold: the
	// smaller of TotalBytes and LimitBytes, less DaemonBytes and the
	// executors'; 0 when neither is known (the planner then has no bound,
	// cpuMemoryMB).
	ModelsBytes int64 `json:"models_bytes"`
}

// leaveExecutors leaves out of the bound what count executors hold of
// their own, each, before they load a model.
func (h *hostMemory) leaveExecutors(count int, each int64) {
	if h.ModelsBytes <= 0 || count <= 0 || each <= 0 {
		return
	}
	h.Executors, h.ExecutorBytes = count, each
	h.ModelsBytes = max(h.ModelsBytes-int64(count)*each, 1<<20)
}

// readHostMemory reads the host's memory and the limit (readHostLimits)
// and the daemon's peak resident memory from its status file under proc.
func readHostMemory(meminfo string, g *memcg.Group, proc string, pid int) hostMemory {
	h := readHostLimits(meminfo, g)
	if b, err := procfs.KiBField(filepath.Join(proc, strconv.Itoa(pid), "status"), "VmHWM"); err == nil {
		h.DaemonBytes = b
	}
	if bound := h.bound(); bound > 0 {
		h.ModelsBytes = max(bound-h.DaemonBytes, 1<<20)
	}
	return h
}

// readHostLimits reads the host's memory from meminfo (/proc/meminfo) and
// the tightest limit over cgroup g and those above it (nil: none to read);
// each is left 0 when it cannot be read.
func readHostLimits(meminfo string, g *memcg.Group) hostMemory {
	var h hostMemory
	if b, err := procfs.KiBField(meminfo, "MemTotal"); err == nil {
		h.TotalBytes = b
	}
	if g != nil {
		if c, err := g.Read(); err == nil {
			h.LimitBytes, h.LimitOf = c.Limit, c.LimitOf
		}
	}
	return h
}

// limitBinds says that the memory limit, not the host's memory, is the
// smaller.
func (h hostMemory) limitBinds() bool {
	return h.LimitBytes > 0 && (h.TotalBytes == 0 || h.LimitBytes < h.TotalBytes)
}

// bound is the smaller of the host's memory and the limit, 0 when neither
// is known.
func (h hostMemory) bound() int64 {
	if h.limitBinds() {
		return h.LimitBytes
	}
	return h.TotalBytes
}

// modelsMB is the bound in the planner's unit: ModelsBytes in MB, or
// cpuMemoryMB when nothing bounds it.
func (h hostMemory) modelsMB() float64 {
	if h.ModelsBytes <= 0 {
		return cpuMemoryMB
	}
	return float64(h.ModelsBytes) / (1 << 20)
}

// source says where the bound comes from, for an operator.
func (h hostMemory) source() string {
	var from string
	switch {
	case h.ModelsBytes <= 0:
		return "unbounded: neither the host's memory nor a memory limit could be read"
	case h.limitBinds():
		from = fmt.Sprintf("gpuletd's memory limit of %s (cgroup %s; MemoryMax= in a systemd unit) less the daemon's peak of %s",
			bytefmt.Size(h.LimitBytes), h.LimitOf, bytefmt.Size(h.DaemonBytes))
	default:
		from = fmt.Sprintf("the host's %s less the daemon's peak of %s", bytefmt.Size(h.TotalBytes), bytefmt.Size(h.DaemonBytes))
	}
	switch {
	case h.Executors == 1:
		from += fmt.Sprintf(" and an executor's own %s", bytefmt.Size(h.ExecutorBytes))
	case h.Executors > 1:
		from += fmt.Sprintf(" and %d executors' own %s each", h.Executors, bytefmt.Size(h.ExecutorBytes))
	}
	return from
}

// readCPUBound reads what bounds the CPU device d now (through the seam
// n.readHost where a test sets one), leaves out its executors' own memory
// as the profile runs measured it, and keeps it for the status.
func (n *node) readCPUBound(ctx context.Context, d mps.Device) *hostMemory {
	var h hostMemory
	if n.readHost != nil {
		h = n.readHost()
	} else {
		h = readHostMemory(filepath.Join(procFS, "meminfo"), n.memGroup, procFS, os.Getpid())
	}
	own, err := n.st.ExecutorMemory(ctx, mps.CPUType)
	if err != nil && ctx.Err() == nil {
		n.log.Warn("read the executors' own memory; the CPU's models count it themselves", zap.Error(err))
	}
	h.leaveExecutors(max(d.MaxGpulets, 1), int64(own*(1<<20)))
	n.hostMem.Store(&h)
	return &h
}

// cpuMemoryStatus is status's cpu_memory: what bounds the models of the CPU
// device and what the plan in force places there.
type cpuMemoryStatus struct {
	hostMemory
	// From says where ModelsBytes comes from, in words.
	From string `json:"from"`
	// PlacedBytes is what the plan's models on the CPU need, one copy per
	// executor (the plan's memory_used_mb of the CPU device).
	PlacedBytes int64 `json:"placed_bytes"`
}

// cpuMemoryNow is status's cpu_memory: nil before a plan read the bound.
func (n *node) cpuMemoryNow() *cpuMemoryStatus {
	h := n.hostMem.Load()
	if h == nil {
		return nil
	}
	s := &cpuMemoryStatus{hostMemory: *h, From: h.source()}
	cur := n.current.Load()
	if cur == nil || cur.plan == nil {
		return s
	}
	cpus := map[string]bool{}
	for _, d := range n.devices.Inventory().Devices {
		cpus[d.ID] = d.Kind == mps.KindCPU
	}
	for _, g := range cur.plan.GPUs {
		if cpus[g.ID] {
			s.PlacedBytes += int64(g.MemoryUsedMB * (1 << 20))
		}
	}
	return s
}
