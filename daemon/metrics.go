package daemon

import (
	"runtime"
	"strconv"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/internal/version"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/pipeline"
	"github.com/gpulet/gpuletd/profiler/store"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the Prometheus families gpuletd exports at /metrics.
type metrics struct {
	reg *prometheus.Registry

	requests   *prometheus.CounterVec
	failures   *prometheus.CounterVec
	violations *prometheus.CounterVec
	e2e        *prometheus.HistogramVec
	queue      *prometheus.HistogramVec
	compute    *prometheus.HistogramVec
	hop        *prometheus.HistogramVec
	batch      *prometheus.HistogramVec
	// cacheHits and cacheMisses count the response cache's look-ups.
	cacheHits, cacheMisses *prometheus.CounterVec
	// abandoned counts the answers REST clients did not take whole;
	// grpcAbandoned those of gRPC clients.
	abandoned     *prometheus.CounterVec
	grpcAbandoned *prometheus.CounterVec
}

// latencyBuckets span 100 µs to 10 s.
var latencyBuckets = prometheus.ExponentialBucketsRange(0.0001, 10, 24)

// hopBuckets span 10 µs to 100 ms: the hop to an executor and back takes
// tens to hundreds of microseconds on an idle host (docs/BENCHMARKS.md).
var hopBuckets = prometheus.ExponentialBucketsRange(0.00001, 0.1, 17)

func newMetrics(n *node) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gpuletd_requests_total", Help: "Inference requests received, per model.",
	}, []string{"model"})
	m.failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gpuletd_request_failures_total", Help: "Inference requests answered with an error, per model and reason.",
	}, []string{"model", "reason"})
	m.violations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gpuletd_slo_violations_total", Help: "Requests not answered successfully within their SLO, per model.",
	}, []string{"model"})
	m.e2e = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gpuletd_request_duration_seconds", Help: "End-to-end latency of successful requests, per model.", Buckets: latencyBuckets,
	}, []string{"model"})
	m.queue = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gpuletd_queue_duration_seconds", Help: "Time requests waited in an executor before their batch started, per model.", Buckets: latencyBuckets,
	}, []string{"model"})
	m.compute = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gpuletd_compute_duration_seconds", Help: "Time of the batch each request ran in, per model.", Buckets: latencyBuckets,
	}, []string{"model"})
	m.hop = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gpuletd_executor_hop_duration_seconds", Help: "Round trip of a request to its executor less the executor's own time for it (waking the executor and the daemon, framing), per model.", Buckets: hopBuckets,
	}, []string{"model"})
	m.batch = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "gpuletd_batch_size", Help: "Size of the batch each request ran in, per model.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128},
	}, []string{"model"})
	m.cacheHits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gpuletd_response_cache_hits_total", Help: "Requests answered from the response cache, per model.",
	}, []string{"model"})
	m.cacheMisses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gpuletd_response_cache_misses_total", Help: "Requests of models that enable the response cache that it did not hold, per model.",
	}, []string{"model"})
	m.abandoned = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gpuletd_http_answers_abandoned_total", Help: "Inference answers over REST not sent whole: the client went away, or took none of their bytes for limits.body_timeout, per model.",
	}, []string{"model"})
	m.grpcAbandoned = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gpuletd_grpc_answers_abandoned_total", Help: "Inference answers over gRPC of more than 1 KiB of raw outputs not sent whole: the client's connection ended, or was closed because it took none of their bytes for limits.body_timeout, per model.",
	}, []string{"model"})
	m.reg.MustRegister(m.requests, m.failures, m.violations, m.e2e, m.queue, m.compute, m.hop, m.batch, m.cacheHits, m.cacheMisses, m.abandoned, m.grpcAbandoned,
		&nodeCollector{n: n}, cacheCollector{n: n}, &tritonCollector{n: n, host: &hostUsage{stat: "/proc/stat", meminfo: "/proc/meminfo"}}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// countRequest counts a request of model, and makes its SLO violations'
// series exist from its first request on, at 0 until one is late: a
// model's SLO attainment (1 − violations / requests, the dashboard's and
// the recorded series') is then 100% rather than no data while none is.
func (m *metrics) countRequest(model string) {
	m.requests.WithLabelValues(model).Inc()
	m.violations.WithLabelValues(model)
}

// nodeCollector reports the node's state at scrape time: gpu-lets, rates,
// reorganizations, restarts, devices.
type nodeCollector struct{ n *node }

var (
	descBusy          = prometheus.NewDesc("gpuletd_gpulet_busy_ratio", "Share of the last 10 s a gpu-let's executor ran batches.", []string{"gpulet", "device"}, nil)
	descSize          = prometheus.NewDesc("gpuletd_gpulet_size_percent", "Size of a gpu-let, percent of its device.", []string{"gpulet", "device"}, nil)
	descBatchFactor   = prometheus.NewDesc("gpuletd_gpulet_batch_time_factor", "How much longer than profiled a model's batches ran on a gpu-let lately (a high quantile over its last 64 batches, at least 1); its executor plans batches with their profiled time times it.", []string{"gpulet", "device", "model"}, nil)
	descBuildInfo     = prometheus.NewDesc("gpuletd_build_info", "Always 1; its labels say which gpuletd serves: its version and the Go release it was built with.", []string{"version", "goversion"}, nil)
	descGpuletMemory  = prometheus.NewDesc("gpuletd_gpulet_memory_bytes", "Memory a gpu-let's executor holds: host (its resident memory) and device (the GPU memory NVML lists for its process).", []string{"gpulet", "device", "kind"}, nil)
	descRate          = prometheus.NewDesc("gpuletd_model_request_rate", "Estimated request rate of a model (the EWMA of its reorganize periods; until its first period ends, its rate since that period opened), requests per second.", []string{"model"}, nil)
	descAssigned      = prometheus.NewDesc("gpuletd_model_assigned_rate", "Request rate the plan assigns to a model, requests per second.", []string{"model"}, nil)
	descHeldBack      = prometheus.NewDesc("gpuletd_model_requests_held_back", "A model's requests the crash suspects hold back, by kind: quarantined (refused, crashes_executor), suspect (each run alone) and hanging (its twins refused, twin_hung); gpuletd models unquarantine lifts them.", []string{"model", "kind"}, nil)
	descExtraHeadroom = prometheus.NewDesc("gpuletd_model_extra_headroom", "Headroom the miss rule adds to a model's plans over the node's, as a fraction of its estimate (0.25: 25% more), after it missed its SLO on a plan that held none of its load back; 0 when none.", []string{"model"}, nil)
	descUnscheduled   = prometheus.NewDesc("gpuletd_model_unscheduled_rate", "Request rate of a model that the plan in force could not place (the node is overloaded; requests over the model's share are refused), requests per second; 0 when all of it is placed.", []string{"model"}, nil)
	descSequences     = prometheus.NewDesc("gpuletd_model_live_sequences", "Live sequences of a stateful model (sequence_batching): started and neither ended nor idle past max_sequence_idle_microseconds; each holds its state tensors in the daemon.", []string{"model"}, nil)
	descState         = prometheus.NewDesc("gpuletd_model_state", "State of each model and pipeline of the repository: 1 for the state it is in (ready: served; waiting: being profiled or placed; unservable: it cannot be, and its metadata, gpuletd status and the events say why), 0 for the others.", []string{"model", "state"}, nil)
	descReorg         = prometheus.NewDesc("gpuletd_reorganizations_total", "Plans applied after the first that changed what runs where.", nil, nil)
	descRestart       = prometheus.NewDesc("gpuletd_executor_restarts_total", "Executors restarted after they died.", nil, nil)
	descEvents        = prometheus.NewDesc("gpuletd_events_total", "Events recorded (gpuletd events) since the daemon started, per kind and severity.", []string{"kind", "severity"}, nil)
	descMemory        = prometheus.NewDesc("gpuletd_device_memory_bytes", "Device memory, total and free.", []string{"device", "state"}, nil)
	descUtil          = prometheus.NewDesc("gpuletd_device_utilization_ratio", "Device utilisation as the driver reports it.", []string{"device"}, nil)
	descPower         = prometheus.NewDesc("gpuletd_device_power_watts", "NVIDIA GPU power as the driver reports it: its draw and the limit it is held to.", []string{"device", "state"}, nil)
	descEnergy        = prometheus.NewDesc("gpuletd_device_energy_joules_total", "Energy an NVIDIA GPU used since the daemon started, as the driver counts it.", []string{"device"}, nil)
	descDeviceXids    = prometheus.NewDesc("gpuletd_device_xid_errors_total", "Xid errors the driver reported for the device since the daemon started, by Xid.", []string{"device", "xid"}, nil)
	descDeviceHealth  = prometheus.NewDesc("gpuletd_device_health", "1 for the device's health now (ok, degraded or failed: nothing is placed on it), 0 for the others.", []string{"device", "state"}, nil)

	descPipeAccuracy = prometheus.NewDesc("gpuletd_pipeline_accuracy_ratio", "Accuracy of a pipeline's recent requests (an average weighted to the latest), from the declared accuracies of the models that ran them.", []string{"pipeline"}, nil)
	descPipePlanned  = prometheus.NewDesc("gpuletd_pipeline_planned_accuracy_ratio", "Expected accuracy of a pipeline's requests under its plan.", []string{"pipeline"}, nil)
	descPipeShare    = prometheus.NewDesc("gpuletd_pipeline_variant_share_ratio", "Share of a pipeline step's requests its plan sends to a model (the step's own or a variant).", []string{"pipeline", "step", "model"}, nil)
	descPipeScaling  = prometheus.NewDesc("gpuletd_pipeline_accuracy_scaling", "1 while a pipeline's plan runs cheaper variants (accuracy scaling), 0 while it runs its steps' own models.", []string{"pipeline"}, nil)
	descPipeFanout   = prometheus.NewDesc("gpuletd_pipeline_fanout_rows", "Mean number of rows a pipeline's fan-out tensor held in its recent requests, each row a request of the steps after it; absent without a fan-out or before a request.", []string{"pipeline"}, nil)
	descPipeReroute  = prometheus.NewDesc("gpuletd_pipeline_rerouted_total", "Step requests of a pipeline a gpu-let refused that were rerouted to another gpu-let of the step's variants.", []string{"pipeline"}, nil)

	descCapacity      = prometheus.NewDesc("gpuletd_planned_capacity_ratio", "How many times the load planned for (every model's measured rate) the planner can place on the node's GPUs in the same mix of models: under 1, part of it is refused; absent before a plan with load.", nil, nil)
	descRequestPath   = prometheus.NewDesc("gpuletd_request_path_cpu_seconds", "CPU time one request takes beyond its model's run, as last measured over a reorganize period: the daemon's (part=daemon) and its executor's on the CPU device (part=executor), which the CPU device's plans count, measured on its gpu-lets of one core alone (absent where none served 1000 requests in a period). Absent before a period answered 1000 requests.", []string{"part"}, nil)
	descUncleanStart  = prometheus.NewDesc("gpuletd_unclean_start", "1 when the daemon's previous run recorded no stop: it was killed (an OOM kill, SIGKILL), crashed, or the machine went down; 0 after a clean stop or at a first start.", nil, nil)
	descStoreWritable = prometheus.NewDesc("gpuletd_store_writable", "1 when the database can be written, 0 while the daemon serves read-only from it (a full disk, files its user may not write).", nil, nil)
	descStoreFailures = prometheus.NewDesc("gpuletd_store_write_failures_total", "Writes to the database that failed because it could not be written.", nil, nil)

	descConns        = prometheus.NewDesc("gpuletd_http_connections", "Client connections open now within the cap (health checks and scrapes answered over it are not counted).", nil, nil)
	descConnsMax     = prometheus.NewDesc("gpuletd_http_connections_max", "Client connections that may be open at once (limits.max_connections, under the open-file limit).", nil, nil)
	descConnsRefused = prometheus.NewDesc("gpuletd_http_connections_refused_total", "Client connections answered 503 and closed because the cap was reached, with the requests and gRPC calls other than health checks refused over it.", nil, nil)
	descBytes        = prometheus.NewDesc("gpuletd_http_inflight_request_bytes", "Request body bytes held by requests in flight.", nil, nil)
	descBesideBytes  = prometheus.NewDesc("gpuletd_http_inflight_beside_bytes", "Bytes requests in flight hold beside their bodies (inputs decoded or copied from shared memory, outputs until written; estimated before they run), in a budget as large as limits.max_inflight_bytes.", nil, nil)
	descModelBytes   = prometheus.NewDesc("gpuletd_model_inflight_request_bytes", "Bytes held by each model's requests in flight: their bodies and what they hold beside them.", []string{"model"}, nil)
	descBytesMax     = prometheus.NewDesc("gpuletd_http_inflight_request_bytes_max", "Request body bytes requests in flight may hold at once (limits.max_inflight_bytes).", nil, nil)
	descBytesRefused = prometheus.NewDesc("gpuletd_http_inflight_bytes_refused_total", "Requests answered 503 because their body, or what it holds beside it, did not fit in its budget of limits.max_inflight_bytes in time.", nil, nil)
	descCertExpiry   = prometheus.NewDesc("gpuletd_tls_certificate_expiry_timestamp_seconds", "When the listeners' TLS certificate in use expires, Unix seconds (absent without TLS).", nil, nil)
)

func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBuildInfo, descBusy, descSize, descBatchFactor, descGpuletMemory, descRate, descAssigned, descExtraHeadroom, descUnscheduled, descSequences, descState, descHeldBack, descReorg, descRestart, descEvents, descMemory, descUtil, descPower, descEnergy, descDeviceHealth, descDeviceXids,
		descGpuletStarts, descStoreWritable, descStoreFailures, descUncleanStart, descCapacity, descRequestPath, descConns, descConnsMax, descConnsRefused, descBytes, descBesideBytes, descModelBytes, descBytesMax, descBytesRefused,
		descPipeAccuracy, descPipePlanned, descPipeShare, descPipeScaling, descPipeReroute, descPipeFanout, descCertExpiry,
		descCgroupWorkingSet, descCgroupLimit, descCgroupOOMKills, descCPUModelsMemory} {
		ch <- d
	}
}

func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.n
	ch <- prometheus.MustNewConstMetric(descBuildInfo, prometheus.GaugeValue, 1, version.Version, runtime.Version())
	n.collectMemory(ch)
	inv := n.inventory()
	for _, g := range n.sup.list() {
		ch <- prometheus.MustNewConstMetric(descSize, prometheus.GaugeValue, float64(g.size), g.id, g.device.ID)
		if m := g.memory(inv); m != nil {
			ch <- prometheus.MustNewConstMetric(descGpuletMemory, prometheus.GaugeValue, float64(m.HostBytes), g.id, g.device.ID, "host")
			if m.DeviceBytes > 0 {
				ch <- prometheus.MustNewConstMetric(descGpuletMemory, prometheus.GaugeValue, float64(m.DeviceBytes), g.id, g.device.ID, "device")
			}
		}
		// From pushed state: a scrape never waits on an executor.
		if busy, ok := g.recentBusy(time.Now()); ok {
			ch <- prometheus.MustNewConstMetric(descBusy, prometheus.GaugeValue, busy, g.id, g.device.ID)
		}
		for model, s := range g.served() {
			ch <- prometheus.MustNewConstMetric(descBatchFactor, prometheus.GaugeValue, s.factor, g.id, g.device.ID, model)
		}
	}
	for model, r := range n.rates.estimates(time.Now()) {
		ch <- prometheus.MustNewConstMetric(descRate, prometheus.GaugeValue, r, model)
	}
	if cur := n.current.Load(); cur != nil {
		collectPlanRates(n, cur.plan, ch)
	}
	collectModelStates(n, ch)
	collectHeldBack(n, time.Now(), ch)
	for _, m := range n.catalog.all() {
		if m.Config.Sequence != nil {
			ch <- prometheus.MustNewConstMetric(descSequences, prometheus.GaugeValue, float64(n.seqs.live(m, time.Now())), m.Name)
		}
	}
	if n.tls != nil {
		ch <- prometheus.MustNewConstMetric(descCertExpiry, prometheus.GaugeValue, float64(n.tls.leaf().NotAfter.Unix()))
	}
	ch <- prometheus.MustNewConstMetric(descReorg, prometheus.CounterValue, float64(n.reorganizations.Load()))
	n.gpuletStarts.collect(ch)
	ch <- prometheus.MustNewConstMetric(descRestart, prometheus.CounterValue, float64(n.sup.restarts.Load()))
	counts := n.events.counted()
	for _, kind := range knownEventKinds {
		// Warnings and errors of every kind from the start, at 0: an
		// alert's increase() misses the first event of a series that
		// appears with it.
		for _, sev := range []store.Severity{store.SeverityWarning, store.SeverityError} {
			if _, ok := counts[eventCount{kind, sev}]; !ok {
				counts[eventCount{kind, sev}] = 0
			}
		}
	}
	for c, count := range counts {
		ch <- prometheus.MustNewConstMetric(descEvents, prometheus.CounterValue, float64(count), c.kind, string(c.sev))
	}
	writable := 0.0
	if ok, _ := n.st.Writable(); ok {
		writable = 1
	}
	ch <- prometheus.MustNewConstMetric(descStoreWritable, prometheus.GaugeValue, writable)
	unclean := 0.0
	if n.uncleanStart {
		unclean = 1
	}
	ch <- prometheus.MustNewConstMetric(descUncleanStart, prometheus.GaugeValue, unclean)
	if c := n.capacity.get(); c != nil {
		ch <- prometheus.MustNewConstMetric(descCapacity, prometheus.GaugeValue, c.Ratio)
	}
	if p := n.path.get(); p != nil {
		ch <- prometheus.MustNewConstMetric(descRequestPath, prometheus.GaugeValue, p.DaemonUS/1e6, "daemon")
		if p.ExecutorsUS != nil {
			ch <- prometheus.MustNewConstMetric(descRequestPath, prometheus.GaugeValue, *p.ExecutorsUS/1e6, "executor")
		}
	}
	ch <- prometheus.MustNewConstMetric(descStoreFailures, prometheus.CounterValue, float64(n.st.WriteFailures()))
	if n.conns != nil {
		ch <- prometheus.MustNewConstMetric(descConns, prometheus.GaugeValue, float64(n.conns.Open()))
		ch <- prometheus.MustNewConstMetric(descConnsMax, prometheus.GaugeValue, float64(n.conns.Max()))
		ch <- prometheus.MustNewConstMetric(descConnsRefused, prometheus.CounterValue, float64(n.conns.Refused()))
	}
	if n.bodies != nil {
		ch <- prometheus.MustNewConstMetric(descBytes, prometheus.GaugeValue, float64(n.bodies.InUse()))
		ch <- prometheus.MustNewConstMetric(descBesideBytes, prometheus.GaugeValue, float64(n.besideInUse()))
		ch <- prometheus.MustNewConstMetric(descBytesMax, prometheus.GaugeValue, float64(n.bodies.Max()))
		ch <- prometheus.MustNewConstMetric(descBytesRefused, prometheus.CounterValue, float64(n.budgetRefused()))
		held := n.heldByModel()
		for _, m := range n.catalog.all() {
			if _, ok := held[m.Name]; !ok {
				held[m.Name] = 0
			}
		}
		for model, b := range held {
			ch <- prometheus.MustNewConstMetric(descModelBytes, prometheus.GaugeValue, float64(b), model)
		}
	}
	collectPipelines(n, ch)
	for _, d := range inv.Devices {
		for _, h := range []mps.Health{mps.HealthOK, mps.HealthDegraded, mps.HealthFailed} {
			v := 0.0
			if d.Health == h {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descDeviceHealth, prometheus.GaugeValue, v, d.ID, string(h))
		}
		for xid, count := range d.XidErrors {
			ch <- prometheus.MustNewConstMetric(descDeviceXids, prometheus.CounterValue, float64(count), d.ID, strconv.FormatUint(xid, 10))
		}
		if d.MemoryTotal > 0 {
			ch <- prometheus.MustNewConstMetric(descMemory, prometheus.GaugeValue, float64(d.MemoryTotal), d.ID, "total")
			ch <- prometheus.MustNewConstMetric(descMemory, prometheus.GaugeValue, float64(d.MemoryFree), d.ID, "free")
		}
		if d.Utilization != nil {
			ch <- prometheus.MustNewConstMetric(descUtil, prometheus.GaugeValue, float64(d.Utilization.GPU)/100, d.ID)
		}
		if p := d.Power; p != nil {
			ch <- prometheus.MustNewConstMetric(descPower, prometheus.GaugeValue, p.Watts, d.ID, "draw")
			if p.LimitWatts > 0 {
				ch <- prometheus.MustNewConstMetric(descPower, prometheus.GaugeValue, p.LimitWatts, d.ID, "limit")
			}
			ch <- prometheus.MustNewConstMetric(descEnergy, prometheus.CounterValue, p.EnergyJoules, d.ID)
		}
	}
}

// collectPipelines reports each served pipeline's accuracy scaling (the
// mode, the variant shares, the accuracy expected and served, the
// reroutes) and its fan-out's mean rows.
func collectPipelines(n *node, ch chan<- prometheus.Metric) {
	for _, p := range n.catalog.allPipelines() {
		sc := n.pipes.snapshot(p.Name)
		ch <- prometheus.MustNewConstMetric(descPipeReroute, prometheus.CounterValue, float64(sc.Rerouted), p.Name)
		if rows := n.pipes.fanoutRows(p.Name); p.Config.Ensemble.Fanout != "" && rows > 0 {
			ch <- prometheus.MustNewConstMetric(descPipeFanout, prometheus.GaugeValue, rows, p.Name)
		}
		if sc.Served > 0 {
			ch <- prometheus.MustNewConstMetric(descPipeAccuracy, prometheus.GaugeValue, sc.Accuracy, p.Name)
		}
		if sc.Scaling == "" {
			continue
		}
		scaling := 0.0
		if sc.Scaling == pipeline.AccuracyScaling {
			scaling = 1
		}
		ch <- prometheus.MustNewConstMetric(descPipeScaling, prometheus.GaugeValue, scaling, p.Name)
		ch <- prometheus.MustNewConstMetric(descPipePlanned, prometheus.GaugeValue, sc.Planned, p.Name)
		for i, step := range sc.Mix {
			for _, v := range step {
				ch <- prometheus.MustNewConstMetric(descPipeShare, prometheus.GaugeValue, v.Share, p.Name, strconv.Itoa(i), v.Model)
			}
		}
	}
}

// collectModelStates reports gpuletd_model_state: per model of the
// repository, 1 for its state and 0 for the others, so that an alert can
// match a model that is not served.
func collectModelStates(n *node, ch chan<- prometheus.Metric) {
	for model, state := range n.repositoryStates() {
		for _, s := range modelStates {
			v := 0.0
			if s == state {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descState, prometheus.GaugeValue, v, model, s)
		}
	}
}

// collectHeldBack reports gpuletd_model_requests_held_back: per served
// model, its quarantined, suspect and hanging requests at now.
func collectHeldBack(n *node, now time.Time, ch chan<- prometheus.Metric) {
	for _, m := range n.catalog.all() {
		suspects, quarantined, hanging := n.crashes.counts(m.Name, now)
		for kind, v := range map[string]int{"quarantined": quarantined, "suspect": suspects, "hanging": hanging} {
			ch <- prometheus.MustNewConstMetric(descHeldBack, prometheus.GaugeValue, float64(v), m.Name, kind)
		}
	}
}

// collectPlanRates reports what plan gives each model: the rate it
// assigns, and for every served model the rate it could not place (0 when
// all of it is placed), so that an overloaded node can be alerted on, and
// the headroom the miss rule adds to its plans (0 when none).
func collectPlanRates(n *node, plan *gpulet.Plan, ch chan<- prometheus.Metric) {
	for model, r := range plan.Assigned() {
		ch <- prometheus.MustNewConstMetric(descAssigned, prometheus.GaugeValue, r, model)
	}
	room := n.room()
	for _, m := range n.catalog.all() {
		ch <- prometheus.MustNewConstMetric(descUnscheduled, prometheus.GaugeValue, plan.Unscheduled[m.Name], m.Name)
		ch <- prometheus.MustNewConstMetric(descExtraHeadroom, prometheus.GaugeValue, room.Extra[m.Name], m.Name)
	}
}
