package daemon

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulet/gpuletd/control"
)

// gpuletStarts counts the gpu-lets the plans started, by how they started
// (gpuletd_gpulet_starts_total).
type gpuletStarts struct {
	beside, afterDrain, overOld atomic.Int64
}

// add counts what a reorganization started: beside the old gpu-lets, once
// the old ones had drained for want of room beside them, or (on the CPU)
// on cores old ones held.
func (s *gpuletStarts) add(out control.Outcome[*gpuletRun]) {
	s.beside.Add(int64(out.Started - out.Overlapped))
	s.overOld.Add(int64(out.Overlapped))
	s.afterDrain.Add(int64(out.Deferred))
}

// gpuletStartsHelp is gpuletd_gpulet_starts_total's help.
const gpuletStartsHelp = "gpu-lets the plans started, by how: beside the old ones (beside), once the old ones had drained for want of room beside them (after_drain: a model only those served had no route meanwhile unless they stayed until last), or on cores old ones held (over_old, the CPU device alone)."

var descGpuletStarts = prometheus.NewDesc("gpuletd_gpulet_starts_total", gpuletStartsHelp, []string{"how"}, nil)

// collect sends the counts, every series from the start (at 0: an alert's
// increase() misses the first start of a series that appears with it).
func (s *gpuletStarts) collect(ch chan<- prometheus.Metric) {
	for how, c := range map[string]*atomic.Int64{"beside": &s.beside, "after_drain": &s.afterDrain, "over_old": &s.overOld} {
		ch <- prometheus.MustNewConstMetric(descGpuletStarts, prometheus.CounterValue, float64(c.Load()), how)
	}
}
