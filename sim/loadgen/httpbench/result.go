package httpbench

import "time"

// Floor and GRPCFloor are the p50 overheads the HTTP and gRPC paths must
// stay under.
const (
	Floor     = 200 * time.Microsecond
	GRPCFloor = 150 * time.Microsecond
)

// Result is what a run measured. Times are in microseconds.
type Result struct {
	// Device is the device the daemon used; DeviceNote says why it is not
	// the CPU after a fallback.
	Device     string `json:"device"`
	DeviceNote string `json:"device_note,omitempty"`
	Policy     string `json:"policy"`
	Model      string `json:"model"`
	// Protocol is http or grpc.
	Protocol string `json:"protocol"`
	// Tensors is json, binary or raw (gRPC).
	Tensors       string  `json:"tensors"`
	RequestBytes  int     `json:"request_bytes"`
	ResponseBytes float64 `json:"response_bytes"`
	SLOMS         float64 `json:"slo_ms"`
	Rate          float64 `json:"rate"`
	DurationS     float64 `json:"duration_s"`

	// Echo is where the bare server ran: "process" (a process of its
	// own, the default) or "in-process" (inside the bench's process).
	Echo string `json:"echo"`

	DaemonP50US float64 `json:"daemon_p50_us"`
	DaemonP90US float64 `json:"daemon_p90_us"`
	DaemonP99US float64 `json:"daemon_p99_us"`
	DaemonMaxUS float64 `json:"daemon_max_us"`
	EchoP50US   float64 `json:"echo_p50_us"`
	EchoP90US   float64 `json:"echo_p90_us"`
	EchoP99US   float64 `json:"echo_p99_us"`
	EchoMaxUS   float64 `json:"echo_max_us"`
	// ExecutorMeanUS is the mean time a request spent queued and computed
	// in the executor (the statistics extension's queue and compute_infer).
	ExecutorMeanUS float64 `json:"executor_mean_us"`
	// HopMeanUS is the mean round trip of a request to its executor less
	// the executor's own time for it (the daemon's
	// gpuletd_executor_hop_duration_seconds): waking both processes and
	// framing, part of OverheadP50US; 0 when not measured.
	HopMeanUS float64 `json:"executor_hop_mean_us"`
	// DifferenceP50US is DaemonP50US − EchoP50US.
	DifferenceP50US float64 `json:"difference_p50_us"`
	// OverheadP50US is DifferenceP50US − ExecutorMeanUS: what the HTTP
	// path adds around the executor's work.
	OverheadP50US float64 `json:"overhead_p50_us"`
	FloorUS       float64 `json:"floor_us"`
	FloorMet      bool    `json:"floor_met"`

	// RefuseP50US is the daemon's p50 for a request it reads and decodes
	// whole, then refuses (400: unknown input) before routing.
	RefuseP50US float64 `json:"daemon_refuse_p50_us"`
	// DecodeP50US is RefuseP50US − EchoP50US: reading, decoding and
	// answering beyond the bare server.
	DecodeP50US float64 `json:"decode_p50_us"`
	// HopP50US is DaemonP50US − RefuseP50US − ExecutorMeanUS: routing, the
	// executor hop both ways and the answer's encoding.
	HopP50US float64 `json:"route_hop_encode_p50_us"`

	// RequestsPerSecond is the daemon's answers per second.
	RequestsPerSecond float64          `json:"requests_per_second"`
	DaemonSent        int64            `json:"daemon_sent"`
	DaemonOK          int64            `json:"daemon_ok"`
	DaemonAttainment  float64          `json:"daemon_slo_attainment"`
	DaemonFailed      map[string]int64 `json:"daemon_failed"`
	DaemonFirstError  string           `json:"daemon_first_error,omitempty"`
	EchoOK            int64            `json:"echo_ok"`
	DaemonLagP99US    float64          `json:"daemon_schedule_lag_p99_us"`
	EchoLagP99US      float64          `json:"echo_schedule_lag_p99_us"`

	// CPU time per answered request, from /proc/<pid>/stat; -1: unknown.
	// The net values take away what the processes use when idle (at least
	// 0: at low rates the idle use is most of it and noise can exceed the
	// rest).
	DaemonCPUUS    float64 `json:"daemon_cpu_us_per_request"`
	ExecutorCPUUS  float64 `json:"executor_cpu_us_per_request"`
	DaemonNetCPUUS float64 `json:"daemon_net_cpu_us_per_request"`
	// EchoCPUUS is the bare server's CPU per answered request (a process
	// of its own only; -1 otherwise).
	EchoCPUUS        float64 `json:"echo_cpu_us_per_request"`
	ExecutorNetCPUUS float64 `json:"executor_net_cpu_us_per_request"`
	// The daemon's heap allocations per answered request (objects and
	// bytes, from its Go runtime's counters in /metrics; the bench's own
	// scrapes are counted too, a few against thousands of requests); -1:
	// unknown. Executors have no metrics listener: not measured.
	DaemonAllocs     float64 `json:"daemon_allocs_per_request"`
	DaemonAllocBytes float64 `json:"daemon_alloc_bytes_per_request"`
	// Idle CPU use in cores (0.05: 5% of one core); -1: unknown.
	DaemonIdleCPU   float64 `json:"daemon_idle_cpu_cores"`
	ExecutorIdleCPU float64 `json:"executor_idle_cpu_cores"`

	// Reorganizations is how many plan changes the daemon applied while
	// the bench measured it (the daemon run and the refusal run): each
	// starts executors and disturbs the measurement.
	Reorganizations int64 `json:"reorganizations_during"`

	// Probes are the steps of the rate search.
	Probes []Probe `json:"rate_search,omitempty"`
}

// Probe is one step of the rate search.
type Probe struct {
	Rate  float64 `json:"rate"`
	P99US float64 `json:"daemon_p99_us"`
	// Failed counts the requests that failed or were dropped.
	Failed int64 `json:"failed"`
	Kept   bool  `json:"kept"`
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
