package daemon

import (
	"github.com/prometheus/client_golang/prometheus"
)

// memoryStatus is what the daemon's memory cgroup holds, its executors'
// memory included, and may hold: status's memory.
type memoryStatus struct {
	// Cgroup names the group (/system.slice/gpuletd.service under
	// systemd).
	Cgroup string `json:"cgroup"`
	// UsageBytes counts the page cache too; WorkingSetBytes does not count
	// the cache the kernel may drop at once, and is what meets the limit.
	UsageBytes      int64 `json:"usage_bytes"`
	WorkingSetBytes int64 `json:"working_set_bytes"`
	// LimitBytes is the tightest limit over the group and those above it
	// (0: none), set by LimitOf (MemoryMax= of a unit or slice).
	LimitBytes int64  `json:"limit_bytes,omitempty"`
	LimitOf    string `json:"limit_of,omitempty"`
	// OOMKills counts the group's processes the kernel killed for memory
	// since the group was made (under systemd, since the service started);
	// -1 unknown.
	OOMKills int64 `json:"oom_kills"`
	// NearLimit says the working set is past memoryNearLimit of the limit:
	// the status line, gpuletd status and the page warn of it.
	NearLimit bool `json:"near_limit,omitempty"`
}

// memoryNearLimit is the share of its memory limit past which the
// daemon's cgroup is near it (GpuletdNearMemoryLimit's threshold too).
const memoryNearLimit = 0.9

// memoryNow reads the daemon's memory cgroup; nil where it has none to
// read.
func (n *node) memoryNow() *memoryStatus {
	if n.memGroup == nil {
		return nil
	}
	c, err := n.memGroup.Read()
	if err != nil || c.Usage < 0 {
		return nil
	}
	return &memoryStatus{Cgroup: n.memGroup.Name, UsageBytes: c.Usage, WorkingSetBytes: c.WorkingSet,
		LimitBytes: c.Limit, LimitOf: c.LimitOf, OOMKills: c.Kills,
		NearLimit: c.Limit > 0 && float64(c.WorkingSet) >= memoryNearLimit*float64(c.Limit)}
}

var (
	descCgroupWorkingSet = prometheus.NewDesc("gpuletd_memory_cgroup_working_set_bytes", "Memory the daemon's cgroup (its executors with it) holds, less the file cache the kernel may drop at once: what its memory limit is met by.", nil, nil)
	descCgroupLimit      = prometheus.NewDesc("gpuletd_memory_cgroup_limit_bytes", "The tightest memory limit over the daemon's cgroup and those above it (MemoryMax=); absent without one.", nil, nil)
	descCgroupOOMKills   = prometheus.NewDesc("gpuletd_memory_cgroup_oom_kills_total", "Processes of the daemon's cgroup the kernel killed for memory since the group was made (under systemd, since the service started).", nil, nil)
	descCPUModelsMemory  = prometheus.NewDesc("gpuletd_cpu_models_memory_bytes", cpuModelsMemoryHelp, []string{"kind"}, nil)
)

// cpuModelsMemoryHelp is gpuletd_cpu_models_memory_bytes's help.
const cpuModelsMemoryHelp = "Memory of the models on the CPU device's gpu-lets: what they may hold (bound: the host's memory or gpuletd's memory limit, less the most the daemon has held) and what the plan in force places there (placed: one copy per executor, as measured when each model was profiled); absent without a CPU device or before a plan."

// collectMemory reports the daemon's memory cgroup, where it has one, and
// the CPU models' memory, where the node has a CPU device.
func (n *node) collectMemory(ch chan<- prometheus.Metric) {
	if c := n.cpuMemoryNow(); c != nil {
		if c.ModelsBytes > 0 {
			ch <- prometheus.MustNewConstMetric(descCPUModelsMemory, prometheus.GaugeValue, float64(c.ModelsBytes), "bound")
		}
		ch <- prometheus.MustNewConstMetric(descCPUModelsMemory, prometheus.GaugeValue, float64(c.PlacedBytes), "placed")
	}
	m := n.memoryNow()
	if m == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(descCgroupWorkingSet, prometheus.GaugeValue, float64(m.WorkingSetBytes))
	if m.LimitBytes > 0 {
		ch <- prometheus.MustNewConstMetric(descCgroupLimit, prometheus.GaugeValue, float64(m.LimitBytes))
	}
	if m.OOMKills >= 0 {
		ch <- prometheus.MustNewConstMetric(descCgroupOOMKills, prometheus.CounterValue, float64(m.OOMKills))
	}
}
