package httpbench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gpulet/gpuletd/internal/ctxsleep"
	"github.com/gpulet/gpuletd/internal/procfs"
	"github.com/gpulet/gpuletd/sim/loadgen"
	dto "github.com/prometheus/client_model/go"
)

// sample is what the bench reads of the daemon before and after a
// measurement.
type sample struct {
	at                        time.Time
	answered                  int64         // successful inferences
	executorCount, executorNS int64         // queue + compute in the executor
	daemonCPU, executorCPU    time.Duration // -1: unknown
	executorPIDs              []int
	reorganizations           int64
	mallocs, allocBytes       float64 // the daemon's Go heap counters; -1: unknown
	// hopSum and hopCount total the daemon's hop histogram (hopMetric).
	hopSum   float64
	hopCount uint64
}

// hopMetric is the daemon's histogram of the hop to an executor and back,
// outside the executor.
const hopMetric = "gpuletd_executor_hop_duration_seconds"

// statusPart is the part of GET /api/v1/status the bench reads.
type statusPart struct {
	Gpulets []struct {
		PID int `json:"pid"`
	} `json:"gpulets"`
	Reorganizations int64 `json:"reorganizations"`
}

// sample reads the statistics extension, the gpu-lets' processes and the
// CPU time of the daemon and its executors.
func (d *daemon) sample(ctx context.Context, client *http.Client) (sample, error) {
	s := sample{at: time.Now(), daemonCPU: -1, executorCPU: -1, mallocs: -1, allocBytes: -1}
	if fams, err := loadgen.ScrapeMetrics(ctx, client, d.base+"/metrics"); err == nil {
		if v, err := unlabelledValues(fams, "go_memstats_mallocs_total", "go_memstats_alloc_bytes_total"); err == nil {
			s.mallocs, s.allocBytes = v[0], v[1]
		}
		s.hopSum, s.hopCount = histogramTotals(fams, hopMetric)
	}
	stats, err := loadgen.FetchStats(ctx, client, d.base, d.model)
	if err != nil {
		return s, err
	}
	for _, m := range stats.ModelStats {
		s.answered += m.InferenceCount
		s.executorCount += m.InferenceStats["compute_infer"].Count
		s.executorNS += m.InferenceStats["queue"].NS + m.InferenceStats["compute_infer"].NS
	}
	var st statusPart
	if err := loadgen.GetJSON(ctx, client, d.base+"/api/v1/status", &st); err != nil {
		return s, err
	}
	s.reorganizations = st.Reorganizations
	for _, g := range st.Gpulets {
		if g.PID > 0 {
			s.executorPIDs = append(s.executorPIDs, g.PID)
		}
	}
	slices.Sort(s.executorPIDs)
	if cpu, err := procfs.CPUTime(d.cmd.Process.Pid); err == nil {
		s.daemonCPU = cpu
	}
	var total time.Duration
	for _, pid := range s.executorPIDs {
		cpu, err := procfs.CPUTime(pid)
		if err != nil {
			return s, nil
		}
		total += cpu
	}
	s.executorCPU = total
	return s, nil
}

// idleShare is the CPU the daemon and its executors use, in cores; -1 is
// unknown.
type idleShare struct{ daemon, executor float64 }

// idle measures the CPU the daemon and its executors use while no request
// comes.
func (d *daemon) idle(ctx context.Context, client *http.Client, span time.Duration) (idleShare, error) {
	a, err := d.sample(ctx, client)
	if err != nil {
		return idleShare{}, err
	}
	if err := ctxsleep.Sleep(ctx, span); err != nil {
		return idleShare{}, err
	}
	b, err := d.sample(ctx, client)
	if err != nil {
		return idleShare{}, err
	}
	secs := b.at.Sub(a.at).Seconds()
	share := idleShare{daemon: -1, executor: -1}
	if a.daemonCPU >= 0 && b.daemonCPU >= 0 {
		share.daemon = (b.daemonCPU - a.daemonCPU).Seconds() / secs
	}
	if a.executorCPU >= 0 && b.executorCPU >= 0 && slices.Equal(a.executorPIDs, b.executorPIDs) {
		share.executor = (b.executorCPU - a.executorCPU).Seconds() / secs
	}
	return share, nil
}

// unlabelledValues finds each name's unlabelled sample; an error when one
// of names has none.
func unlabelledValues(fams map[string]*dto.MetricFamily, names ...string) ([]float64, error) {
	out := make([]float64, len(names))
	for i, name := range names {
		found := false
		for _, m := range fams[name].GetMetric() {
			if len(m.GetLabel()) > 0 {
				continue
			}
			switch {
			case m.Counter != nil:
				out[i], found = m.Counter.GetValue(), true
			case m.Gauge != nil:
				out[i], found = m.Gauge.GetValue(), true
			case m.Untyped != nil:
				out[i], found = m.Untyped.GetValue(), true
			}
		}
		if !found {
			return nil, fmt.Errorf("read metrics: no sample of %s", name)
		}
	}
	return out, nil
}

// histogramTotals sums a histogram family's sums and counts over all its
// label sets (0, 0 when it has none).
func histogramTotals(fams map[string]*dto.MetricFamily, name string) (sum float64, count uint64) {
	for _, m := range fams[name].GetMetric() {
		if h := m.GetHistogram(); h != nil {
			sum += h.GetSampleSum()
			count += h.GetSampleCount()
		}
	}
	return sum, count
}
