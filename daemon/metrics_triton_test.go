package daemon

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/internal/monoclock"
	"github.com/gpulet/gpuletd/mps"
)

// collectFunc is a collector made of one collect function.
type collectFunc func(chan<- prometheus.Metric)

func (f collectFunc) Describe(chan<- *prometheus.Desc)    {}
func (f collectFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

func TestTritonMetricNames(t *testing.T) {
	m := askModel()
	m.Name, m.Family, m.Version = "m:2", "m", 2
	m.Config.ResponseCache = true
	lat, err := sched.LinearLatency(time.Millisecond, 5*time.Millisecond, 8)
	require.NoError(t, err)
	a, b := &gpuletRun{id: "a"}, &gpuletRun{id: "b"}
	n := &node{catalog: &catalog{models: map[string]*repository.Model{"m:2": m}, pipelines: map[string]*repository.Model{}}, router: newRouter()}
	cfg := config.Default()
	n.cfg.Store(&cfg)
	n.router.install(map[string][]routeEntry{"m:2": {{g: a, weight: 1, lat: lat}, {g: b, weight: 1, lat: lat}}})
	now := time.Now()
	for g, queued := range map[*gpuletRun]int32{a: 3, b: 4} {
		n.router.update(g, &pb.ExecutorState{AtMonoNs: monoclock.Of(now), FreeAtMonoNs: monoclock.Of(now), Models: []*pb.ModelState{{Name: "m:2", Queued: queued}}})
	}
	c := n.counters.of("m:2")
	c.success.add(3 * time.Millisecond)
	c.success.add(5 * time.Millisecond)
	c.fail.add(time.Millisecond)
	c.failedAs[tritonFailureReason(reasonDeadline)].Add(1)
	c.cacheHit.add(20 * time.Microsecond)
	c.cacheMiss.add(30 * time.Microsecond)
	c.cacheMiss.add(40 * time.Microsecond)
	c.queue.add(500 * time.Microsecond)
	c.compute.add(2 * time.Millisecond)
	c.computeInput.add(120 * time.Microsecond)
	c.computeOutput.add(30 * time.Microsecond)
	c.batches.add(0.5)
	c.batches.add(0.5)
	c.inferences.Add(5) // a request of 4 rows and one of 1
	want := `
# HELP nv_inference_count Inferences performed: the rows of the requests that ran, a request of n rows counting n and one the response cache answered none (Triton's name).
# TYPE nv_inference_count counter
nv_inference_count{model="m",version="2"} 5
# HELP nv_inference_exec_count Batches the successful requests ran in, each request adding its share of its batch (Triton's name).
# TYPE nv_inference_exec_count counter
nv_inference_exec_count{model="m",version="2"} 1
# HELP nv_inference_request_duration_us Cumulative end-to-end time of successful requests, microseconds (Triton's name).
# TYPE nv_inference_request_duration_us counter
nv_inference_request_duration_us{model="m",version="2"} 8000
# HELP nv_inference_request_failure Failed inference requests by Triton's reason: REJECTED, CANCELED, BACKEND or OTHER (Triton's name; gpuletd_request_failures_total has gpuletd's reasons).
# TYPE nv_inference_request_failure counter
nv_inference_request_failure{model="m",reason="BACKEND",version="2"} 0
nv_inference_request_failure{model="m",reason="CANCELED",version="2"} 0
nv_inference_request_failure{model="m",reason="OTHER",version="2"} 0
nv_inference_request_failure{model="m",reason="REJECTED",version="2"} 1
# HELP nv_inference_request_success Successful inference requests (Triton's name; see gpuletd_requests_total).
# TYPE nv_inference_request_success counter
nv_inference_request_success{model="m",version="2"} 2
# HELP nv_inference_pending_request_count Requests waiting in the model's queues, as its executors last reported them (at each batch's end) and the requests routed to them since, less the batches due to have started (Triton's name).
# TYPE nv_inference_pending_request_count gauge
nv_inference_pending_request_count{model="m",version="2"} 7
# HELP nv_cache_num_hits_per_model Requests answered from the response cache (Triton's name; see gpuletd_response_cache_hits_total).
# TYPE nv_cache_num_hits_per_model counter
nv_cache_num_hits_per_model{model="m",version="2"} 1
# HELP nv_cache_num_misses_per_model Requests the response cache did not hold (Triton's name; see gpuletd_response_cache_misses_total).
# TYPE nv_cache_num_misses_per_model counter
nv_cache_num_misses_per_model{model="m",version="2"} 2
# HELP nv_cache_hit_duration_per_model Cumulative time of the cache's look-ups that hit, microseconds (Triton's name).
# TYPE nv_cache_hit_duration_per_model counter
nv_cache_hit_duration_per_model{model="m",version="2"} 20
# HELP nv_cache_miss_duration_per_model Cumulative time of the cache's look-ups that missed and of keeping their answers, microseconds (Triton's name).
# TYPE nv_cache_miss_duration_per_model counter
nv_cache_miss_duration_per_model{model="m",version="2"} 70
# HELP nv_inference_compute_input_duration_us Cumulative time readying the inputs of the batches requests ran in (validating, joining their rows), microseconds (Triton's name).
# TYPE nv_inference_compute_input_duration_us counter
nv_inference_compute_input_duration_us{model="m",version="2"} 120
# HELP nv_inference_compute_infer_duration_us Cumulative time of the model's runs in the batches requests ran in, microseconds (Triton's name).
# TYPE nv_inference_compute_infer_duration_us counter
nv_inference_compute_infer_duration_us{model="m",version="2"} 2000
# HELP nv_inference_compute_output_duration_us Cumulative time splitting the outputs of the batches requests ran in, microseconds (Triton's name).
# TYPE nv_inference_compute_output_duration_us counter
nv_inference_compute_output_duration_us{model="m",version="2"} 30
`
	names := []string{"nv_inference_request_success", "nv_inference_request_failure", "nv_inference_count", "nv_inference_exec_count", "nv_inference_request_duration_us",
		"nv_inference_compute_input_duration_us", "nv_inference_compute_infer_duration_us", "nv_inference_compute_output_duration_us",
		"nv_inference_pending_request_count", "nv_cache_num_hits_per_model", "nv_cache_num_misses_per_model", "nv_cache_hit_duration_per_model", "nv_cache_miss_duration_per_model"}
	collectModels := collectFunc(func(ch chan<- prometheus.Metric) { collectTritonModels(n, ch) })
	require.NoError(t, testutil.CollectAndCompare(collectModels, strings.NewReader(want), names...))
	// A request routed since the last report waits too; a model without
	// the response cache has no cache series, as in Triton.
	_, _, _, err = n.router.routeAny([]string{"m:2"}, n.router.now()+time.Second, n.router.now()+time.Second, nil)
	require.NoError(t, err)
	m.Config.ResponseCache = false
	require.NoError(t, testutil.CollectAndCompare(collectModels, strings.NewReader(`
# HELP nv_inference_pending_request_count Requests waiting in the model's queues, as its executors last reported them (at each batch's end) and the requests routed to them since, less the batches due to have started (Triton's name).
# TYPE nv_inference_pending_request_count gauge
nv_inference_pending_request_count{model="m",version="2"} 8
`), "nv_inference_pending_request_count", "nv_cache_num_hits_per_model"))

	// Without the latency counters (Triton's counter_latencies=false).
	off := cfg
	off.Metrics.TritonLatencyCounters = false
	n.cfg.Store(&off)
	require.Zero(t, testutil.CollectAndCount(collectModels, "nv_inference_request_duration_us", "nv_inference_queue_duration_us",
		"nv_inference_compute_input_duration_us", "nv_inference_compute_infer_duration_us", "nv_inference_compute_output_duration_us"))
	require.Equal(t, 1, testutil.CollectAndCount(collectModels, "nv_inference_request_success"), "the other families stay")

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
	cfg = config.Default()
	n.cfg.Store(&cfg)
	require.Zero(t, testutil.CollectAndCount(&tritonCollector{n: n}))
}

// Every reason gpuletd fails a request with has Triton's: the scheduling's
// refusals REJECTED, a client's leaving CANCELED, a failed run BACKEND,
// the rest OTHER.
func TestTritonFailureReasons(t *testing.T) {
	want := map[string]string{
		reasonDeadline: "REJECTED", reasonDropped: "REJECTED", reasonQueueFull: "REJECTED", reasonOverShare: "REJECTED",
		reasonShedPriority: "REJECTED", reasonMemoryBudget: "REJECTED", reasonCancelled: "CANCELED",
		reasonExecutorFailed: "BACKEND", reasonCrashesExecutor: "BACKEND", reasonTwinHung: "BACKEND", reasonOutputNotJSON: "BACKEND",
	}
	for _, r := range failureReasons {
		got := tritonFailureReasons[tritonFailureReason(r)]
		require.Equal(t, cmp.Or(want[r], "OTHER"), got, r)
	}
}

// The host's CPU utilization is over the time since the scrape before (the
// first since boot); its memory in use is all but what is available.
func TestTritonHostMetrics(t *testing.T) {
	dir := t.TempDir()
	h := &hostUsage{stat: filepath.Join(dir, "stat"), meminfo: filepath.Join(dir, "meminfo")}
	write := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
	}
	write("meminfo", "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    4000000 kB\n")
	collect := collectFunc(h.collect)
	scrape := func(util string) {
		t.Helper()
		require.NoError(t, testutil.CollectAndCompare(collect, strings.NewReader(`
# HELP nv_cpu_utilization Host CPU utilization over every core since the scrape before, 0 to 1 (Triton's name).
# TYPE nv_cpu_utilization gauge
nv_cpu_utilization `+util+`
# HELP nv_cpu_memory_total_bytes Host memory, total (Triton's name).
# TYPE nv_cpu_memory_total_bytes gauge
nv_cpu_memory_total_bytes 1.6384e+10
# HELP nv_cpu_memory_used_bytes Host memory in use: all but what /proc/meminfo counts available (Triton's name).
# TYPE nv_cpu_memory_used_bytes gauge
nv_cpu_memory_used_bytes 1.2288e+10
`)))
	}
	write("stat", "cpu  100 0 100 800 0 0 0 0 0 0\n")
	scrape("0.2")
	write("stat", "cpu  190 0 100 810 0 0 0 0 0 0\n") // 90 busy of 100 since
	scrape("0.9")
	write("stat", "cpu  190 0 100 810 0 0 0 0 0 0\n") // no tick since: the whole since boot
	scrape("0.2636363636363636")                      // 290 of 1100

	require.NoError(t, os.Remove(filepath.Join(dir, "stat")))
	require.Equal(t, 2, testutil.CollectAndCount(collect), "a file it cannot read leaves its metric out")
}
