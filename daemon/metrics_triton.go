package daemon

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulet/gpuletd/mps"
)

// tritonCollector exports, when metrics.triton_names is set, the statistics
// extension's counters and the GPUs' state under the names Triton's
// /metrics uses, so that dashboards and alerts made for Triton read
// gpuletd. The values are the statistics extension's (GET
// /v2/models/<m>/stats): a request counts once in the success and
// failure counts and by its rows in the inference count, and a pipeline
// counts as Triton counts an ensemble. Triton's counters carry no
// _total suffix; the names are kept as Triton has them.
type tritonCollector struct {
	n    *node
	host *hostUsage // the host's CPU and memory (nv_cpu_*)
}

// Triton's metric names and labels.
var (
	tritonModelLabels = []string{"model", "version"}

	descNVSuccess  = prometheus.NewDesc("nv_inference_request_success", "Successful inference requests (Triton's name; see gpuletd_requests_total).", tritonModelLabels, nil)
	descNVFailure  = prometheus.NewDesc("nv_inference_request_failure", "Failed inference requests by Triton's reason: REJECTED, CANCELED, BACKEND or OTHER (Triton's name; gpuletd_request_failures_total has gpuletd's reasons).", append(tritonModelLabels, "reason"), nil)
	descNVPending  = prometheus.NewDesc("nv_inference_pending_request_count", "Requests waiting in the model's queues, as its executors last reported them (at each batch's end) and the requests routed to them since, less the batches due to have started (Triton's name).", tritonModelLabels, nil)
	descNVCount    = prometheus.NewDesc("nv_inference_count", "Inferences performed: the rows of the requests that ran, a request of n rows counting n and one the response cache answered none (Triton's name).", tritonModelLabels, nil)
	descNVExec     = prometheus.NewDesc("nv_inference_exec_count", "Batches the successful requests ran in, each request adding its share of its batch (Triton's name).", tritonModelLabels, nil)
	descNVDuration = prometheus.NewDesc("nv_inference_request_duration_us", "Cumulative end-to-end time of successful requests, microseconds (Triton's name).", tritonModelLabels, nil)
	descNVQueue    = prometheus.NewDesc("nv_inference_queue_duration_us", "Cumulative time requests waited before their batch started, microseconds (Triton's name).", tritonModelLabels, nil)
	descNVCompute  = prometheus.NewDesc("nv_inference_compute_infer_duration_us", "Cumulative time of the model's runs in the batches requests ran in, microseconds (Triton's name).", tritonModelLabels, nil)
	descNVInput    = prometheus.NewDesc("nv_inference_compute_input_duration_us", "Cumulative time readying the inputs of the batches requests ran in (validating, joining their rows), microseconds (Triton's name).", tritonModelLabels, nil)
	descNVOutput   = prometheus.NewDesc("nv_inference_compute_output_duration_us", "Cumulative time splitting the outputs of the batches requests ran in, microseconds (Triton's name).", tritonModelLabels, nil)

	descNVCacheHits     = prometheus.NewDesc("nv_cache_num_hits_per_model", "Requests answered from the response cache (Triton's name; see gpuletd_response_cache_hits_total).", tritonModelLabels, nil)
	descNVCacheMisses   = prometheus.NewDesc("nv_cache_num_misses_per_model", "Requests the response cache did not hold (Triton's name; see gpuletd_response_cache_misses_total).", tritonModelLabels, nil)
	descNVCacheHitTime  = prometheus.NewDesc("nv_cache_hit_duration_per_model", "Cumulative time of the cache's look-ups that hit, microseconds (Triton's name).", tritonModelLabels, nil)
	descNVCacheMissTime = prometheus.NewDesc("nv_cache_miss_duration_per_model", "Cumulative time of the cache's look-ups that missed and of keeping their answers, microseconds (Triton's name).", tritonModelLabels, nil)

	descNVGPUUtil     = prometheus.NewDesc("nv_gpu_utilization", "GPU utilization as the driver reports it, 0 to 1 (Triton's name).", []string{"gpu_uuid"}, nil)
	descNVGPUMemTotal = prometheus.NewDesc("nv_gpu_memory_total_bytes", "GPU memory, total (Triton's name).", []string{"gpu_uuid"}, nil)
	descNVGPUMemUsed  = prometheus.NewDesc("nv_gpu_memory_used_bytes", "GPU memory in use (Triton's name).", []string{"gpu_uuid"}, nil)
	descNVPower       = prometheus.NewDesc("nv_gpu_power_usage", "GPU power draw in watts (Triton's name).", []string{"gpu_uuid"}, nil)
	descNVPowerLimit  = prometheus.NewDesc("nv_gpu_power_limit", "GPU power limit in watts (Triton's name).", []string{"gpu_uuid"}, nil)
	descNVEnergy      = prometheus.NewDesc("nv_energy_consumption", "GPU energy in joules since the daemon started (Triton's name).", []string{"gpu_uuid"}, nil)
)

func (c *tritonCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descNVSuccess, descNVFailure, descNVPending, descNVCount, descNVExec, descNVDuration, descNVQueue, descNVCompute, descNVInput, descNVOutput,
		descNVRequestSummary, descNVQueueSummary, descNVInputSummary, descNVInferSummary, descNVOutputSummary,
		descNVCacheHits, descNVCacheMisses, descNVCacheHitTime, descNVCacheMissTime, descNVCPUUtil, descNVCPUMemTotal, descNVCPUMemUsed,
		descNVGPUUtil, descNVGPUMemTotal, descNVGPUMemUsed, descNVPower, descNVPowerLimit, descNVEnergy} {
		ch <- d
	}
}

func (c *tritonCollector) Collect(ch chan<- prometheus.Metric) {
	if !c.n.conf().Metrics.TritonNames {
		return
	}
	collectTritonModels(c.n, ch)
	collectTritonGPUs(c.n.devices.Inventory().Devices, ch)
	if c.host != nil {
		c.host.collect(ch)
	}
}

// collectTritonModels reports every served model's and pipeline's
// statistics under Triton's names.
func collectTritonModels(n *node, ch chan<- prometheus.Metric) {
	us := func(d *durCount) float64 { return float64(d.ns.Load() / 1e3) } // whole µs, as Triton counts
	served := append(n.catalog.all(), n.catalog.allPipelines()...)
	latencies := n.conf().Metrics.TritonLatencyCounters
	if s := n.summaries(); s != nil {
		s.collect(served, ch)
	}
	for _, m := range served {
		k := n.counters.of(m.Name)
		labels := []string{m.Family, strconv.Itoa(max(m.Version, 1))}
		counter := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
		}
		counter(descNVSuccess, float64(k.success.count.Load()))
		for i, reason := range tritonFailureReasons {
			ch <- prometheus.MustNewConstMetric(descNVFailure, prometheus.CounterValue, float64(k.failedAs[i].Load()), append(labels, reason)...)
		}
		counter(descNVCount, float64(k.inferences.Load()))
		counter(descNVExec, float64(k.batches.whole()))
		if latencies {
			counter(descNVDuration, us(&k.success))
			counter(descNVQueue, us(&k.queue))
			counter(descNVCompute, us(&k.compute))
			counter(descNVInput, us(&k.computeInput))
			counter(descNVOutput, us(&k.computeOutput))
		}
		if n.router != nil {
			ch <- prometheus.MustNewConstMetric(descNVPending, prometheus.GaugeValue, float64(n.router.queued(m.Name)), labels...)
		}
		if m.Config.ResponseCache { // as Triton, only for the models whose cache is on
			counter(descNVCacheHits, float64(k.cacheHit.count.Load()))
			counter(descNVCacheMisses, float64(k.cacheMiss.count.Load()))
			counter(descNVCacheHitTime, us(&k.cacheHit))
			counter(descNVCacheMissTime, us(&k.cacheMiss))
		}
	}
}

// Triton's reasons for a failed request (nv_inference_request_failure's
// reason label), in the order of modelCounters.failedAs.
var tritonFailureReasons = [...]string{"REJECTED", "CANCELED", "BACKEND", "OTHER"}

// tritonFailureReason is the index in tritonFailureReasons of the reason
// Triton would give for a request gpuletd failed with reason: REJECTED
// for a request the scheduling refused or timed out (Triton's queue
// timeouts and backlog), CANCELED for one the client went away from,
// BACKEND for one whose run failed (its executor, its model's output),
// OTHER for the rest (bad requests, models not served, gpuletd's faults).
func tritonFailureReason(reason string) int {
	switch reason {
	case reasonDeadline, reasonDropped, reasonQueueFull, reasonOverShare, reasonShedPriority, reasonMemoryBudget:
		return 0
	case reasonCancelled:
		return 1
	case reasonExecutorFailed, reasonCrashesExecutor, reasonTwinHung, reasonOutputNotJSON:
		return 2
	}
	return 3
}

// collectTritonGPUs reports the NVIDIA GPUs' utilization, memory, power
// and energy under Triton's names, by UUID; other devices have none in
// Triton.
func collectTritonGPUs(devices []mps.Device, ch chan<- prometheus.Metric) {
	for _, d := range devices {
		if d.Kind != mps.KindNVIDIA {
			continue
		}
		if d.Utilization != nil {
			ch <- prometheus.MustNewConstMetric(descNVGPUUtil, prometheus.GaugeValue, float64(d.Utilization.GPU)/100, d.UUID)
		}
		if d.MemoryTotal > 0 {
			ch <- prometheus.MustNewConstMetric(descNVGPUMemTotal, prometheus.GaugeValue, float64(d.MemoryTotal), d.UUID)
			ch <- prometheus.MustNewConstMetric(descNVGPUMemUsed, prometheus.GaugeValue, float64(d.MemoryTotal-d.MemoryFree), d.UUID)
		}
		if p := d.Power; p != nil {
			ch <- prometheus.MustNewConstMetric(descNVPower, prometheus.GaugeValue, p.Watts, d.UUID)
			if p.LimitWatts > 0 {
				ch <- prometheus.MustNewConstMetric(descNVPowerLimit, prometheus.GaugeValue, p.LimitWatts, d.UUID)
			}
			ch <- prometheus.MustNewConstMetric(descNVEnergy, prometheus.CounterValue, p.EnergyJoules, d.UUID)
		}
	}
}
