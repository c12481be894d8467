package daemon

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulet/gpuletd/internal/procfs"
)

// Triton's host metrics (nv_cpu_*), with metrics.triton_names: the host's
// CPU utilization since the scrape before (the first: since boot), its
// memory and what is in use of it (all but MemAvailable).
var (
	descNVCPUUtil     = prometheus.NewDesc("nv_cpu_utilization", "Host CPU utilization over every core since the scrape before, 0 to 1 (Triton's name).", nil, nil)
	descNVCPUMemTotal = prometheus.NewDesc("nv_cpu_memory_total_bytes", "Host memory, total (Triton's name).", nil, nil)
	descNVCPUMemUsed  = prometheus.NewDesc("nv_cpu_memory_used_bytes", "Host memory in use: all but what /proc/meminfo counts available (Triton's name).", nil, nil)
)

// hostUsage samples the host's CPU time and memory at each scrape.
type hostUsage struct {
	stat, meminfo string // /proc/stat and /proc/meminfo; other files in tests

	mu              sync.Mutex
	lastBusy, lastT uint64 // the CPU time at the scrape before
}

// collect reports what it can read; a file it cannot read leaves its
// metrics out of this scrape.
func (h *hostUsage) collect(ch chan<- prometheus.Metric) {
	if busy, total, err := procfs.HostCPUTime(h.stat); err == nil {
		h.mu.Lock()
		db, dt := busy-h.lastBusy, total-h.lastT
		if busy < h.lastBusy || total <= h.lastT { // no tick since, or a counter went back: the whole since boot
			db, dt = busy, total
		}
		h.lastBusy, h.lastT = busy, total
		h.mu.Unlock()
		if dt > 0 {
			ch <- prometheus.MustNewConstMetric(descNVCPUUtil, prometheus.GaugeValue, float64(db)/float64(dt))
		}
	}
	total, err := procfs.KiBField(h.meminfo, "MemTotal")
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(descNVCPUMemTotal, prometheus.GaugeValue, float64(total))
	if avail, err := procfs.KiBField(h.meminfo, "MemAvailable"); err == nil {
		ch <- prometheus.MustNewConstMetric(descNVCPUMemUsed, prometheus.GaugeValue, float64(total-avail))
	}
}
