package loadgen

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// A run's server-side metrics, as perf_analyzer's --collect-metrics reads
// them: the server's Prometheus metrics scraped every interval while the
// run goes, and what they say of each GPU: its mean utilization and power
// draw, the most memory it held, and its memory in all. Triton's names
// (nv_gpu_*, by gpu_uuid) are read where the server gives them (gpuletd
// with metrics.triton_names, or Triton), else gpuletd's own
// (gpuletd_device_*, by device).

// GPUMetrics is what a run's samples say of one GPU.
type GPUMetrics struct {
	// GPU is its UUID (Triton's names) or gpuletd's device ID.
	GPU string `json:"gpu"`
	// Utilization is the mean of the samples, 0 to 1; PowerWatts the mean
	// draw; -1 when no sample gave it.
	Utilization float64 `json:"avg_utilization"`
	PowerWatts  float64 `json:"avg_power_watts"`
	// MaxMemoryUsedBytes is the most a sample saw in use, and
	// MemoryTotalBytes the GPU's memory; -1 when no sample gave it.
	MaxMemoryUsedBytes float64 `json:"max_memory_used_bytes"`
	MemoryTotalBytes   float64 `json:"memory_total_bytes"`
}

// MetricsSummary is what a collection read: from URL, Samples scrapes,
// and each GPU they named, in order.
type MetricsSummary struct {
	URL     string       `json:"url"`
	Samples int          `json:"samples"`
	GPUs    []GPUMetrics `json:"gpus"`
}

// MetricsCollector scrapes a server's metrics until stopped.
type MetricsCollector struct {
	cancel context.CancelFunc
	done   chan metricsResult
}

type metricsResult struct {
	sum MetricsSummary
	err error
}

// StartMetrics scrapes url with client once after has passed (a run's
// warm-up), every interval after, and once more when stopped. Stop ends
// it.
func StartMetrics(ctx context.Context, client *http.Client, url string, after, every time.Duration) *MetricsCollector {
	ctx, cancel := context.WithCancel(ctx)
	c := &MetricsCollector{cancel: cancel, done: make(chan metricsResult, 1)}
	go func() {
		acc := gpuAccumulator{}
		var lastErr error
		scrape := func(ctx context.Context) {
			fams, err := ScrapeMetrics(ctx, client, url)
			if err != nil {
				lastErr = err
				return
			}
			acc.add(fams)
		}
		stopped := false
		if after > 0 {
			wait := time.NewTimer(after)
			select {
			case <-wait.C:
			case <-ctx.Done():
				stopped = true
			}
			wait.Stop()
		}
		if !stopped {
			scrape(ctx)
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for !stopped {
			select {
			case <-tick.C:
				scrape(ctx)
			case <-ctx.Done():
				stopped = true
			}
		}
		final, cancelFinal := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		scrape(final)
		cancelFinal()
		res := metricsResult{sum: MetricsSummary{URL: url, Samples: acc.samples, GPUs: acc.summary()}}
		if acc.samples == 0 {
			res.err = lastErr
		}
		c.done <- res
	}()
	return c
}

// Stop ends the collection and gives what it read; an error when no
// scrape succeeded.
func (c *MetricsCollector) Stop() (MetricsSummary, error) {
	c.cancel()
	res := <-c.done
	return res.sum, res.err
}

// The metric names read, Triton's and gpuletd's.
const (
	nvUtilization = "nv_gpu_utilization"
	nvPower       = "nv_gpu_power_usage"
	nvMemoryUsed  = "nv_gpu_memory_used_bytes"
	nvMemoryTotal = "nv_gpu_memory_total_bytes"

	deviceUtilization = "gpuletd_device_utilization_ratio"
	devicePower       = "gpuletd_device_power_watts"
	deviceMemory      = "gpuletd_device_memory_bytes"
)

// gpuAccumulator sums the samples of each GPU.
type gpuAccumulator struct {
	samples int
	gpus    map[string]*gpuSums
	order   []string
}

type gpuSums struct {
	util, power           float64
	utilN, powerN         int
	maxUsed, total        float64
	haveMemory, haveTotal bool
}

// add reads one scrape.
func (a *gpuAccumulator) add(fams map[string]*dto.MetricFamily) {
	a.samples++
	if a.gpus == nil {
		a.gpus = map[string]*gpuSums{}
	}
	gpu := func(id string) *gpuSums {
		s, ok := a.gpus[id]
		if !ok {
			s = &gpuSums{}
			a.gpus[id] = s
			a.order = append(a.order, id)
		}
		return s
	}
	each := func(name string, f func(labels map[string]string, v float64)) {
		for _, m := range fams[name].GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			f(labels, m.GetGauge().GetValue()+m.GetUntyped().GetValue())
		}
	}
	if _, triton := fams[nvMemoryTotal]; triton || fams[nvUtilization] != nil {
		each(nvUtilization, func(l map[string]string, v float64) { s := gpu(l["gpu_uuid"]); s.util += v; s.utilN++ })
		each(nvPower, func(l map[string]string, v float64) { s := gpu(l["gpu_uuid"]); s.power += v; s.powerN++ })
		each(nvMemoryUsed, func(l map[string]string, v float64) {
			s := gpu(l["gpu_uuid"])
			s.maxUsed, s.haveMemory = max(s.maxUsed, v), true
		})
		each(nvMemoryTotal, func(l map[string]string, v float64) { s := gpu(l["gpu_uuid"]); s.total, s.haveTotal = v, true })
		return
	}
	each(deviceUtilization, func(l map[string]string, v float64) { s := gpu(l["device"]); s.util += v; s.utilN++ })
	each(devicePower, func(l map[string]string, v float64) {
		if l["state"] == "draw" {
			s := gpu(l["device"])
			s.power += v
			s.powerN++
		}
	})
	memory := map[string]map[string]float64{} // device: state: bytes
	each(deviceMemory, func(l map[string]string, v float64) {
		if memory[l["device"]] == nil {
			memory[l["device"]] = map[string]float64{}
		}
		memory[l["device"]][l["state"]] = v
	})
	for _, dev := range slices.Sorted(maps.Keys(memory)) {
		total, ok := memory[dev]["total"]
		if !ok {
			continue
		}
		s := gpu(dev)
		s.total, s.haveTotal = total, true
		if free, ok := memory[dev]["free"]; ok {
			s.maxUsed, s.haveMemory = max(s.maxUsed, total-free), true
		}
	}
}

// summary is each GPU's figures, in the order first seen.
func (a *gpuAccumulator) summary() []GPUMetrics {
	out := make([]GPUMetrics, 0, len(a.order))
	for _, id := range a.order {
		s := a.gpus[id]
		m := GPUMetrics{GPU: id, Utilization: -1, PowerWatts: -1, MaxMemoryUsedBytes: -1, MemoryTotalBytes: -1}
		if s.utilN > 0 {
			m.Utilization = s.util / float64(s.utilN)
		}
		if s.powerN > 0 {
			m.PowerWatts = s.power / float64(s.powerN)
		}
		if s.haveMemory {
			m.MaxMemoryUsedBytes = s.maxUsed
		}
		if s.haveTotal {
			m.MemoryTotalBytes = s.total
		}
		out = append(out, m)
	}
	return out
}

// maxMetricsBytes bounds a scrape's exposition.
const maxMetricsBytes = 16 << 20

// ScrapeMetrics reads and parses the Prometheus text exposition at url.
func ScrapeMetrics(ctx context.Context, client *http.Client, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read metrics at %s: %s", url, resp.Status)
	}
	return ParseMetrics(io.LimitReader(resp.Body, maxMetricsBytes))
}

// ParseMetrics parses a Prometheus text exposition.
func ParseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	return fams, nil
}
