package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/mps"
)

// collectFunc is a collector made of one collect function.
type collectFunc func(chan<- prometheus.Metric)

func (f collectFunc) Describe(chan<- *prometheus.Desc)    {}
func (f collectFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

func TestTritonMetricNames(t *testing.T) {
	m := askModel()
	m.Name, m.Family, m.Version = "m:2", "m", 2
	n := &node{catalog: &catalog{models: map[string]*repository.Model{"m:2": m}, pipelines: map[string]*repository.Model{}}}
	c := n.counters.of("m:2")
	c.success.add(3 * time.Millisecond)
	c.success.add(5 * time.Millisecond)
	c.fail.add(time.Millisecond)
	c.queue.add(500 * time.Microsecond)
	c.compute.add(2 * time.Millisecond)
	c.batches.add(0.5)
	c.batches.add(0.5)
	want := `
# HELP nv_inference_count Inferences performed, one per successful request (Triton's name).
# TYPE nv_inference_count counter
nv_inference_count{model="m",version="2"} 2
# HELP nv_inference_exec_count Batches the successful requests ran in, each request adding its share of its batch (Triton's name).
# TYPE nv_inference_exec_count counter
nv_inference_exec_count{model="m",version="2"} 1
# HELP nv_inference_request_duration_us Cumulative end-to-end time of successful requests, microseconds (Triton's name).
# TYPE nv_inference_request_duration_us counter
nv_inference_request_duration_us{model="m",version="2"} 8000
# HELP nv_inference_request_failure Failed inference requests (Triton's name; see gpuletd_request_failures_total).
# TYPE nv_inference_request_failure counter
nv_inference_request_failure{model="m",version="2"} 1
# HELP nv_inference_request_success Successful inference requests (Triton's name; see gpuletd_requests_total).
# TYPE nv_inference_request_success counter
nv_inference_request_success{model="m",version="2"} 2
`
	require.NoError(t, testutil.CollectAndCompare(collectFunc(func(ch chan<- prometheus.Metric) { collectTritonModels(n, ch) }),
		strings.NewReader(want), "nv_inference_request_success", "nv_inference_request_failure", "nv_inference_count",
		"nv_inference_exec_count", "nv_inference_request_duration_us"))

	devices := []mps.Device{
		{ID: "gpu0", Kind: mps.KindNVIDIA, UUID: "GPU-aaaa", MemoryTotal: 80 << 30, MemoryFree: 60 << 30, Utilization: &mps.Utilization{GPU: 37},
			Power: &mps.Power{Watts: 251.5, LimitWatts: 700, EnergyJoules: 1234.5}},
		{ID: "emu0", Kind: mps.KindEmulated, UUID: "GPU-emu", MemoryTotal: 16 << 30, MemoryFree: 16 << 30},
		{ID: "cpu", Kind: mps.KindCPU},
	}
	want = `
# HELP nv_gpu_memory_used_bytes GPU memory in use (Triton's name).
# TYPE nv_gpu_memory_used_bytes gauge
nv_gpu_memory_used_bytes{gpu_uuid="GPU-aaaa"} 2.147483648e+10
# HELP nv_gpu_utilization GPU utilization as the driver reports it, 0 to 1 (Triton's name).
# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="GPU-aaaa"} 0.37
# HELP nv_gpu_power_usage GPU power draw in watts (Triton's name).
# TYPE nv_gpu_power_usage gauge
nv_gpu_power_usage{gpu_uuid="GPU-aaaa"} 251.5
# HELP nv_gpu_power_limit GPU power limit in watts (Triton's name).
# TYPE nv_gpu_power_limit gauge
nv_gpu_power_limit{gpu_uuid="GPU-aaaa"} 700
# HELP nv_energy_consumption GPU energy in joules since the daemon started (Triton's name).
# TYPE nv_energy_consumption counter
nv_energy_consumption{gpu_uuid="GPU-aaaa"} 1234.5
`
	require.NoError(t, testutil.CollectAndCompare(collectFunc(func(ch chan<- prometheus.Metric) { collectTritonGPUs(devices, ch) }),
		strings.NewReader(want), "nv_gpu_memory_used_bytes", "nv_gpu_utilization", "nv_gpu_power_usage", "nv_gpu_power_limit", "nv_energy_consumption"))

	// Off by default: the collector reports nothing.
	cfg := config.Default()
	n.cfg.Store(&cfg)
	require.Zero(t, testutil.CollectAndCount(&tritonCollector{n: n}))
}
