package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulet/gpuletd/internal/bytefmt"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// metricsFlags are perf_analyzer's --collect-metrics and its companions:
// the server's Prometheus metrics read while a run (or a sweep's step)
// goes, and what they say of its GPUs reported beside the run.
type metricsFlags struct {
	collect    bool
	url        string
	intervalMS int
	verboseCSV bool
}

func (m *metricsFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&m.collect, "collect-metrics", false, "read the server's Prometheus metrics while the load runs and report each GPU's mean utilization and power and the most memory it held, as perf_analyzer's --collect-metrics (gpuletd's names, or Triton's nv_gpu_*)")
	f.StringVar(&m.url, "metrics-url", "", "where --collect-metrics reads, as perf_analyzer's --metrics-url (HOST:PORT/metrics or a URL; default the daemon's /metrics)")
	f.IntVar(&m.intervalMS, "metrics-interval", 1000, "milliseconds between --collect-metrics' reads, as perf_analyzer's --metrics-interval")
	f.BoolVar(&m.verboseCSV, "verbose-csv", false, "with --csv-format perf_analyzer, perf_analyzer's --verbose-csv columns too: Avg latency, request/response, response wait and, with --collect-metrics, the GPUs' metrics")
}

// check refuses the companions without --collect-metrics, and an interval
// of none.
func (m *metricsFlags) check(cmd *cobra.Command) error {
	f := cmd.Flags()
	switch {
	case !m.collect && (f.Changed("metrics-url") || f.Changed("metrics-interval")):
		return usageErrorf("load: --metrics-url and --metrics-interval are --collect-metrics': give it too")
	case m.intervalMS <= 0:
		return usageErrorf("load: --metrics-interval %d: give a positive number of milliseconds", m.intervalMS)
	}
	return nil
}

// target is the URL to read: --metrics-url (http:// put before a bare
// HOST:PORT/PATH), else the daemon's /metrics.
func (m *metricsFlags) target(d *daemonAPI) string {
	switch {
	case m.url == "":
		return d.base + "/metrics"
	case strings.Contains(m.url, "://"):
		return m.url
	}
	return "http://" + m.url
}

// start begins reading once the run's warm-up has passed, when asked;
// nil when not.
func (m *metricsFlags) start(ctx context.Context, d *daemonAPI, warmup time.Duration) *loadgen.MetricsCollector {
	if !m.collect {
		return nil
	}
	return loadgen.StartMetrics(ctx, d.client, m.target(d), warmup, time.Duration(m.intervalMS)*time.Millisecond)
}

// stop ends c's reading (nil: none) and gives what it read; a reading
// that read nothing is warned of on warn and gives nil.
func (m *metricsFlags) stop(c *loadgen.MetricsCollector, warn io.Writer) *loadgen.MetricsSummary {
	if c == nil {
		return nil
	}
	s, err := c.Stop()
	if err != nil {
		fmt.Fprintf(warn, "warning: --collect-metrics read nothing at %s (%v): give --metrics-url where the server's metrics are\n", s.URL, err)
		return nil
	}
	return &s
}

// writeServerMetrics says what the server's metrics said of its GPUs over
// a run, a line each, indent before every line.
func writeServerMetrics(w io.Writer, s *loadgen.MetricsSummary, indent string) {
	if s == nil {
		return
	}
	if len(s.GPUs) == 0 {
		fmt.Fprintf(w, "%sserver metrics: no GPU in %d reads of %s\n", indent, s.Samples, s.URL)
		return
	}
	fmt.Fprintf(w, "%sserver metrics, %d reads of %s:\n", indent, s.Samples, s.URL)
	for _, g := range s.GPUs {
		var parts []string
		if g.Utilization >= 0 {
			parts = append(parts, fmt.Sprintf("utilization %.1f%%", 100*g.Utilization))
		}
		if g.PowerWatts >= 0 {
			parts = append(parts, fmt.Sprintf("power %.1f W", g.PowerWatts))
		}
		if len(parts) > 0 {
			parts[len(parts)-1] += " (means)"
		}
		switch {
		case g.MaxMemoryUsedBytes >= 0 && g.MemoryTotalBytes > 0:
			parts = append(parts, fmt.Sprintf("memory %s at most of %s", bytefmt.Size(int64(g.MaxMemoryUsedBytes)), bytefmt.Size(int64(g.MemoryTotalBytes))))
		case g.MemoryTotalBytes > 0:
			parts = append(parts, "memory "+bytefmt.Size(int64(g.MemoryTotalBytes)))
		}
		fmt.Fprintf(w, "%s  %s: %s\n", indent, g.GPU, strings.Join(parts, ", "))
	}
}
