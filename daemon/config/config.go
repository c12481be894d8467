// Package config is gpuletd's configuration: its types, built-in defaults,
// loading from one YAML file, GPULETD_<SECTION>_<FIELD> environment overrides,
// validation, and printing the effective configuration with where each value
// came from.
package config

import "time"

// Config is the whole configuration of gpuletd serve. The YAML names are the
// field tags; systemd/gpuletd.yaml documents every field and holds exactly the
// defaults returned by Default.
type Config struct {
	// Listen is the HTTP listener (REST API, admin page, metrics).
	Listen string `yaml:"listen"`
	// GRPCListen is the gRPC listener (the Open Inference Protocol's
	// inference.GRPCInferenceService); empty: no gRPC.
	GRPCListen string `yaml:"grpc_listen"`
	// StateDir holds the SQLite store and other state kept across restarts.
	StateDir string `yaml:"state_dir"`
	// HistoryRetention is how long the store keeps events and superseded
	// plans; 0 keeps them for ever.
	HistoryRetention Duration `yaml:"history_retention"`
	// RuntimeDir holds executor sockets and MPS pipe directories.
	RuntimeDir string `yaml:"runtime_dir"`
	// ModelRepository is the folder of <model>/config.pbtxt (Triton's layout)
	// or <model>/config.yaml, and <model>/<version>/model.onnx.
	ModelRepository string `yaml:"model_repository"`
	// ExtraModelRepositories are further folders of models laid out as
	// ModelRepository, served beside it (Triton's repeated
	// --model-repository). A model folder name that more than one of them
	// holds is served from none, saying why; uploads and `gpuletd models
	// synth` keep to ModelRepository.
	ExtraModelRepositories []string `yaml:"extra_model_repositories"`
	// ModelConfigName, when set, picks each model folder's configuration
	// configs/<name>.pbtxt over its config.pbtxt where it has one
	// (Triton's --model-config-name): one repository shared by servers of
	// different GPUs, each with its own settings.
	ModelConfigName string `yaml:"model_config_name"`
	// DefaultMaxBatchSize is the max_batch_size of a model whose
	// configuration leaves it to its file, when the file's inputs and
	// outputs all have a dynamic first dimension (Triton's auto-completed
	// configuration and its --backend-config=default-max-batch-size).
	DefaultMaxBatchSize int `yaml:"default_max_batch_size"`
	// DefaultSLO is the SLO of a model whose configuration gives none; 0
	// makes such a model an error.
	DefaultSLO Duration `yaml:"default_slo"`
	// RepositoryPoll is how often the daemon looks for model folders added,
	// changed or removed in the repository and follows them (Triton's poll
	// mode); 0: only at start, on a reload (SIGHUP) and through the
	// repository API.
	RepositoryPoll Duration `yaml:"repository_poll"`
	// StartupModels are the model folders served at start (Triton's
	// --load-model with explicit model control): ["*"] every one; [] none;
	// names those and, for a pipeline, its steps and their variants. The
	// others wait in the repository for the repository API (or a change
	// of their folder seen by a reload or a poll).
	StartupModels []string `yaml:"startup_models"`
	// StrictReadiness makes the server ready (GET /v2/health/ready, gRPC
	// ServerReady) only while every model and pipeline of the repository
	// serves, as Triton's --strict-readiness: one that cannot be served
	// takes the node out of a load balancer's rotation. Off: ready once
	// each serves or says why it cannot.
	StrictReadiness bool `yaml:"strict_readiness"`
	// AllowClientSHM lets clients register shared-memory regions (system
	// and CUDA) to place tensors in (Triton's --allow-client-shm). Off, as
	// in Triton: a region names memory the daemon's user can reach, which
	// any local client could otherwise have it read from and write into.
	AllowClientSHM bool `yaml:"allow_client_shm"`

	Log          Log          `yaml:"log"`
	Metrics      Metrics      `yaml:"metrics"`
	Devices      Devices      `yaml:"devices"`
	Partitioning Partitioning `yaml:"partitioning"`
	Scheduler    Scheduler    `yaml:"scheduler"`
	Limits       Limits       `yaml:"limits"`
	// ResponseCache keeps the answers of models that enable it
	// (response_cache in their configuration).
	ResponseCache ResponseCache `yaml:"response_cache"`
	Auth          Auth          `yaml:"auth"`
	// Trace says where request traces go: files (Triton's trace
	// extension) or an OpenTelemetry collector.
	Trace Trace `yaml:"trace"`
	// TLS serves both listeners over TLS when it names a certificate.
	TLS         TLS         `yaml:"tls"`
	ONNXRuntime ONNXRuntime `yaml:"onnxruntime"`
	MPS         MPS         `yaml:"mps"`
}

// Log configures logging.
type Log struct {
	// Level is debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is auto (journal lines when stderr is systemd's journal stream,
	// console on a terminal, JSON otherwise), json, console or journal.
	Format string `yaml:"format"`
}

// Metrics configures what /metrics exports beside gpuletd's own families,
// and where else it is served.
type Metrics struct {
	// Listen is a listener of its own that serves /metrics alone (Triton's
	// metrics port), so that a Prometheus on another host can scrape the
	// node while the API stays on loopback; empty: /metrics is on listen
	// only. TLS, when configured, applies to it too.
	Listen string `yaml:"listen"`
	// TritonNames also exports the statistics under Triton's metric names
	// (nv_inference_*, nv_gpu_*), for dashboards and alerts built for
	// Triton.
	TritonNames bool `yaml:"triton_names"`
	// TritonLatencyCounters, with TritonNames, exports Triton's latency
	// counters (nv_inference_request_duration_us, _queue_, _compute_input_,
	// _compute_infer_ and _compute_output_duration_us); false leaves them
	// out (tritonserver's --metrics-config counter_latencies=false).
	TritonLatencyCounters bool `yaml:"triton_latency_counters"`
	// TritonSummaries, with TritonNames, also exports Triton's latency
	// summaries (nv_inference_request_summary_us, _queue_, _compute_input_,
	// _compute_infer_ and _compute_output_summary_us): quantiles of the
	// last minute's requests (--metrics-config summary_latencies=true).
	TritonSummaries bool `yaml:"triton_summaries"`
	// TritonSummaryQuantiles are the summaries' quantiles, each
	// "quantile:allowed error" (--metrics-config summary_quantiles).
	TritonSummaryQuantiles []string `yaml:"triton_summary_quantiles"`
}

// ResponseCache configures the node's response cache (Triton's
// --cache-config local,size=…).
type ResponseCache struct {
	// Size is the bytes of answers kept, least recently used dropped
	// first; 0 keeps none.
	Size ByteSize `yaml:"size"`
}

// Trace modes.
const (
	TraceModeTriton        = "triton"
	TraceModeOpenTelemetry = "opentelemetry"
)

// Trace configures where the trace extension's traces go (Triton's
// --trace-config mode=…, opentelemetry,url=…, opentelemetry,resource=…).
type Trace struct {
	// Mode is triton (JSON files under state_dir/traces) or opentelemetry
	// (spans exported to OpenTelemetryURL).
	Mode string `yaml:"mode"`
	// OpenTelemetryURL is the collector's OTLP/HTTP traces endpoint, such
	// as http://localhost:4318/v1/traces.
	OpenTelemetryURL string `yaml:"opentelemetry_url"`
	// OpenTelemetryResource are key=value attributes of the spans'
	// resource, beside service.name=gpuletd (a key given replaces the
	// default's).
	OpenTelemetryResource []string `yaml:"opentelemetry_resource"`
	// OpenTelemetryBSPMaxQueueSize is the most spans waiting to be
	// exported; more are dropped and said (Triton's bsp_max_queue_size).
	OpenTelemetryBSPMaxQueueSize int `yaml:"opentelemetry_bsp_max_queue_size"`
	// OpenTelemetryBSPScheduleDelay is the longest a span waits to be
	// exported (Triton's bsp_schedule_delay).
	OpenTelemetryBSPScheduleDelay Duration `yaml:"opentelemetry_bsp_schedule_delay"`
	// OpenTelemetryBSPMaxExportBatchSize is the most spans one export
	// sends, and as many queued are sent at once (Triton's
	// bsp_max_export_batch_size).
	OpenTelemetryBSPMaxExportBatchSize int `yaml:"opentelemetry_bsp_max_export_batch_size"`
	// Level, Rate, Count, LogFrequency and File are the global trace
	// settings the daemon starts with (Triton's --trace-config level=,
	// rate=, count=, log-frequency=, file=); the trace extension changes
	// them at run time. An empty Level is OFF.
	Level        []string `yaml:"level"`
	Rate         int64    `yaml:"rate"`
	Count        int64    `yaml:"count"`
	LogFrequency int64    `yaml:"log_frequency"`
	File         string   `yaml:"file"`
}

// The trace levels of trace.level.
const (
	TraceLevelOff        = "OFF"
	TraceLevelTimestamps = "TIMESTAMPS"
	TraceLevelTensors    = "TENSORS"
)

// TLS configures HTTPS on listen and TLS on grpc_listen (Triton's
// --grpc-use-ssl with --grpc-server-cert and --grpc-server-key).
type TLS struct {
	// CertFile is the server's certificate chain in PEM, leaf first;
	// empty: plain HTTP and gRPC.
	CertFile string `yaml:"cert_file"`
	// KeyFile is the certificate's private key in PEM.
	KeyFile string `yaml:"key_file"`
	// ClientCAFile, when set, makes both listeners ask every client for a
	// certificate one of these CAs (PEM) signed (Triton's
	// --grpc-use-ssl-mutual with --grpc-root-cert).
	ClientCAFile string `yaml:"client_ca_file"`
	// ClientCertFile and ClientKeyFile are the certificate and key
	// gpuletd's own commands present to a daemon that asks for one.
	ClientCertFile string `yaml:"client_cert_file"`
	ClientKeyFile  string `yaml:"client_key_file"`
}

// Enabled says whether the listeners serve TLS.
func (t TLS) Enabled() bool { return t.CertFile != "" }

// Partitioning says how GPUs are cut into gpu-lets.
type Partitioning struct {
	// Backend is mps (thread-percentage partitions), mig (MIG instances) or
	// none (whole GPUs, temporal sharing only).
	Backend string `yaml:"backend"`
	// Sizes are the gpu-let sizes the planner may use, in percent of a GPU.
	Sizes []int `yaml:"sizes"`
	// MaxGPUletsPerGPU caps how many gpu-lets one GPU is cut into.
	MaxGPUletsPerGPU int `yaml:"max_gpulets_per_gpu"`
	// MIGReconfigure lists the GPUs (by index or UUID, or "all") whose MIG
	// instances gpuletd may create and destroy to follow the plan; on the
	// others it uses the instances as they are.
	MIGReconfigure []string `yaml:"mig_reconfigure"`
}

// Scheduler configures batching inside executors and the planner loop.
type Scheduler struct {
	// Policy is the batch scheduling policy: deferred, eager, timeout:<duration> or flex.
	Policy string `yaml:"policy"`
	// Algorithm is the placement algorithm: gpulet-int, gpulet, sbp or ideal.
	Algorithm string `yaml:"algorithm"`
	// ReorganizePeriod is how often the planner re-plans from measured rates.
	ReorganizePeriod Duration `yaml:"reorganize_period"`
	// EWMAWeight is the weight of the newest period in each model's rate estimate (0 < w ≤ 1).
	EWMAWeight float64 `yaml:"ewma_weight"`
	// IdlePlan is what a node with no traffic runs: spread (every model an
	// equal share of the GPUs' time) or pack (the minimum rates, on as
	// few gpu-lets as hold them).
	IdlePlan string `yaml:"idle_plan"`
	// PriorityReserve is the share of a request's time to its deadline
	// that a model's lowest priority level leaves to the highest level
	// coming, in [0, 0.9): at overload the lower levels give way (0: the
	// levels are read but change nothing).
	PriorityReserve float64 `yaml:"priority_reserve"`
	// HangTimeout is the least time a batch runs before its executor
	// takes it for a run that will not end (at least 20 times the batch's
	// planned time): the executor answers what it holds and exits, and is
	// started again; on a GPU, a device that no longer finishes its work.
	// 0: 5s on the CPU, 30s on GPUs, real or emulated (a first run of a
	// batch size may tune its kernels for seconds).
	HangTimeout Duration `yaml:"hang_timeout"`
}

// DefaultPriorityReserve is Scheduler.PriorityReserve's default. Measured
// on the daemon (ResNet50 on two emulated V100s, 40% of the load at the
// higher of two levels; docs/BENCHMARKS.md "Priority levels"): at 0.4 the
// higher level kept 99.98% of its requests within the SLO at 1.5 times
// what its gpu-lets serve, where a third kept 96–99%, and the lower level
// lost 0.2% of its requests at 0.9 times (a third: 0.05%, 0.45: 0.8%).
const DefaultPriorityReserve = 0.4

// MaxPriorityReserve bounds Scheduler.PriorityReserve: the lowest level
// keeps a tenth of its time at least.
const MaxPriorityReserve = 0.9

// Idle plans (Scheduler.IdlePlan).
const (
	IdlePlanSpread = "spread"
	IdlePlanPack   = "pack"
)

// Limits bounds what one client can ask of the daemon.
type Limits struct {
	// MaxRequestBody is the largest request body accepted.
	MaxRequestBody ByteSize `yaml:"max_request_body"`
	// MaxQueuedPerModel is how many requests of one model may wait in an executor.
	MaxQueuedPerModel int `yaml:"max_queued_per_model"`
	// BodyTimeout bounds reading one request, headers and body: a client
	// that sends more slowly is answered 408 and its connection closed.
	// A client that takes none of its answers' bytes for as long loses its
	// connection too.
	BodyTimeout Duration `yaml:"body_timeout"`
	// IdleTimeout closes a keep-alive connection that sends no request for
	// this long.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// MaxConnections is how many client connections may be open at once;
	// more are answered 503 and closed, but for health checks and scrapes
	// (connlimit's reserve). It is held under the process's open-file
	// limit.
	MaxConnections int `yaml:"max_connections"`
	// MaxInflightBytes is how many request body bytes all requests in flight
	// may hold at once, and as many again what they hold beside their
	// bodies (decoded inputs, outputs); a request that does not fit waits
	// up to its SLO, then is answered 503.
	MaxInflightBytes ByteSize `yaml:"max_inflight_bytes"`
	// ShutdownTimeout is how long a stopping daemon lets the requests in
	// flight finish (Triton's --exit-timeout-secs); those still running
	// then are answered unavailable as their executors stop.
	ShutdownTimeout Duration `yaml:"shutdown_timeout"`
}

// Auth guards the admin API.
type Auth struct {
	// AdminToken is the bearer token mutating admin calls need when the
	// listener is not loopback. Empty: such calls are refused off loopback.
	AdminToken string `yaml:"admin_token"`
	// AllowedHosts are the names, besides localhost, IP addresses, the
	// listener's own name and the machine's host name, that requests may
	// carry in their Host header ("*": any). Other names are refused, so
	// that a web page cannot reach the daemon through a name it controls
	// (DNS rebinding).
	AllowedHosts []string `yaml:"allowed_hosts"`
	// AllowedOrigins are the web origins (scheme://host[:port]), besides
	// the daemon's own and loopback ones, whose pages may send requests
	// that are not GET or HEAD and read the answers (CORS) ("*": any).
	// Other origins are refused, so
	// that a page open in a browser cannot unload models or re-plan the
	// node (cross-site request forgery).
	AllowedOrigins []string `yaml:"allowed_origins"`
	// RestrictedAPIs restrict groups of the inference APIs, REST and
	// gRPC, on every listener, loopback too, to requests that carry a
	// header (gRPC metadata) with a value, as Triton's
	// --http-restricted-api and --grpc-restricted-protocol:
	// "api[,api…]:header=value" each (RestrictableAPIs).
	RestrictedAPIs []string `yaml:"restricted_apis"`
}

// ONNXRuntime locates and tunes ONNX Runtime.
type ONNXRuntime struct {
	// Library is the path of libonnxruntime.so.1; empty searches the usual places.
	Library string `yaml:"library"`
	// Provider is the execution provider on NVIDIA gpu-lets: cuda or tensorrt.
	Provider string `yaml:"provider"`
	// CUDALibraryDirs are directories (glob patterns allowed) holding the
	// CUDA 13 runtime libraries and cuDNN when the loader does not find them.
	CUDALibraryDirs []string `yaml:"cuda_library_dirs"`
}

// MPS configures the NVIDIA MPS control daemons.
type MPS struct {
	// ControlBinary is the nvidia-cuda-mps-control program.
	ControlBinary string `yaml:"control_binary"`
	// PipeDirectory names an MPS control daemon that is already running; empty
	// means gpuletd starts one per GPU under runtime_dir.
	PipeDirectory string `yaml:"pipe_directory"`
	// SetComputeMode lets gpuletd set GPUs to EXCLUSIVE_PROCESS for MPS.
	SetComputeMode bool `yaml:"set_compute_mode"`
	// Foreground runs each MPS control daemon as gpuletd's child
	// (nvidia-cuda-mps-control -f) instead of letting it daemonize (-d):
	// gpuletd reaps it when it quits, as a container whose first process
	// reaps no orphans needs, and sees its death at once.
	Foreground bool `yaml:"foreground"`
}

// ModelRepositories are the model repositories served, in order:
// ModelRepository, then ExtraModelRepositories.
func (c Config) ModelRepositories() []string {
	return append([]string{c.ModelRepository}, c.ExtraModelRepositories...)
}

// MaxBatchSizeLimit is the largest max_batch_size a model's configuration
// (and default_max_batch_size) may give.
const MaxBatchSizeLimit = 4096

// StartupAll in startup_models serves every model folder at start.
const StartupAll = "*"

// Default returns the built-in defaults: exactly what systemd/gpuletd.yaml holds.
func Default() Config {
	return Config{
		Listen:     "127.0.0.1:8700",
		GRPCListen: "127.0.0.1:8701",
		StateDir:   "/var/lib/gpuletd",
		// A month of history, as an operator reads it back after an
		// incident; what the daemon runs needs none of it.
		HistoryRetention:       Duration(30 * 24 * time.Hour),
		RuntimeDir:             "/run/gpuletd",
		ModelRepository:        "/var/lib/gpuletd/models",
		ExtraModelRepositories: []string{},
		DefaultMaxBatchSize:    4, // Triton's default-max-batch-size
		StartupModels:          []string{StartupAll},
		Log:                    Log{Level: "info", Format: "auto"},
		// Triton's quantiles (its metrics guide); the errors are gpuletd's.
		Metrics: Metrics{TritonLatencyCounters: true, TritonSummaryQuantiles: []string{"0.5:0.05", "0.9:0.01", "0.95:0.001", "0.99:0.001", "0.999:0.0001"}},
		Devices: Devices{Mode: DevicesAuto},
		Partitioning: Partitioning{
			Backend: "mps",
			// The gpu-let paper's MPS sizes, at most two gpu-lets per GPU.
			Sizes:            []int{20, 40, 50, 60, 80, 100},
			MaxGPUletsPerGPU: 2,
			MIGReconfigure:   []string{},
		},
		Scheduler: Scheduler{
			Policy:    "deferred",
			Algorithm: "gpulet-int",
			// The gpu-let paper re-plans every 20 s (section 6).
			ReorganizePeriod: Duration(20 * time.Second),
			EWMAWeight:       0.5,
			IdlePlan:         IdlePlanSpread,
			PriorityReserve:  DefaultPriorityReserve,
		},
		Limits: Limits{
			MaxRequestBody:    64 << 20,
			MaxQueuedPerModel: 4096,
			BodyTimeout:       Duration(30 * time.Second),
			IdleTimeout:       Duration(30 * time.Second),
			MaxConnections:    1024,
			MaxInflightBytes:  256 << 20,
			ShutdownTimeout:   Duration(10 * time.Second),
		},
		// The batch span processor's defaults are OpenTelemetry's SDKs' (and so Triton's).
		Trace: Trace{Mode: TraceModeTriton, OpenTelemetryResource: []string{}, OpenTelemetryBSPMaxQueueSize: 2048,
			OpenTelemetryBSPScheduleDelay: Duration(5 * time.Second), OpenTelemetryBSPMaxExportBatchSize: 512,
			// Triton's trace defaults: off, one request in 1 000, no count, written when tracing stops.
			Level: []string{}, Rate: 1000, Count: -1, File: "trace.json"},
		Auth:        Auth{AllowedHosts: []string{}, AllowedOrigins: []string{}, RestrictedAPIs: []string{}},
		ONNXRuntime: ONNXRuntime{Provider: "cuda", CUDALibraryDirs: []string{}},
		MPS:         MPS{ControlBinary: "nvidia-cuda-mps-control"},
	}
}
