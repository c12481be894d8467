package loadgen

import (
	"encoding/json"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Failure keys of Report.Failed besides HTTP status codes.
const (
	// FailError is a request that got no HTTP answer (connection refused,
	// reset, timeout).
	FailError = "error"
	// FailCancelled is a request still in flight when the run was cancelled
	// or its drain time ran out.
	FailCancelled = "cancelled"
)

// Report is the outcome of a run. Requests sent during the warm-up are not
// in it.
type Report struct {
	// Model and URL are the target; GRPC is its gRPC address when the
	// requests went over gRPC.
	Model string `json:"model"`
	// ModelVersion is the version sent to (Config.ModelVersion).
	ModelVersion string `json:"model_version,omitempty"`
	URL          string `json:"url"`
	GRPC         string `json:"grpc,omitempty"`
	// Streaming is set when the gRPC requests went over one stream
	// (Config.Streaming).
	Streaming bool `json:"streaming,omitempty"`
	// SharedMemory is set when the tensors lay in a registered system
	// shared-memory region instead of the requests (Config.SharedMemory).
	SharedMemory bool `json:"shared_memory,omitempty"`
	// CUDASharedMemory is set when that region was GPU memory
	// (Config.CUDASharedMemory).
	CUDASharedMemory bool `json:"cuda_shared_memory,omitempty"`
	// Binary is set when the tensors went as binary data (Config.Binary,
	// or Config.AutoBinary for a large request).
	Binary bool `json:"binary,omitempty"`
	// Compression is the coding requests and answers went in
	// (Config.Compression), "" when none.
	Compression string `json:"compression,omitempty"`
	// Priority is the priority level every request asked for
	// (Config.Priority), 0 when none.
	Priority uint64 `json:"priority,omitempty"`
	// Parameters are the request parameters every request carried
	// (Config.Parameters), by name.
	Parameters map[string]any `json:"parameters,omitempty"`
	// BatchSize is the rows of every request when more than one
	// (Config.BatchSize): each request counts once in the counts below,
	// and its rows are BatchSize inferences.
	BatchSize int `json:"batch_size,omitempty"`
	// Rate is the arrival process's mean rate, requests per second; 0 in a
	// closed loop.
	Rate float64 `json:"target_rate"`
	// Closed is the number of requests a closed loop kept in flight
	// (Config.Closed); 0 for an arrival process.
	Closed int `json:"closed_loop,omitempty"`
	// Sequences and SequenceLength are the sequences a stateful model's
	// requests went in (Config.Sequences, Config.SequenceLength); 0 for
	// another model.
	Sequences      int `json:"sequences,omitempty"`
	SequenceLength int `json:"sequence_length,omitempty"`
	// SequenceLengthVariation, SequenceIDStart and SequenceIDEnd are the
	// config's, for a stateful model's run.
	SequenceLengthVariation float64 `json:"sequence_length_variation,omitempty"`
	SequenceIDStart         uint64  `json:"sequence_id_start,omitempty"`
	SequenceIDEnd           uint64  `json:"sequence_id_end,omitempty"`
	// Window is the time requests were scheduled over.
	Window time.Duration `json:"-"`
	// Scheduled is how many requests fell due in the window; each was sent
	// or dropped.
	Scheduled int64 `json:"scheduled"`
	// Sent is how many requests were sent.
	Sent int64 `json:"sent"`
	// Dropped is how many requests the client dropped because Concurrency
	// requests were already in flight.
	Dropped int64 `json:"dropped_by_client"`
	// OK is how many were answered 200 (Config.OKStatus).
	OK int64 `json:"ok"`
	// Failed counts the others by HTTP status ("503"; from gpuletd with its
	// failure reason, "503 dropped"), gRPC status code ("Unavailable") or
	// FailError, FailCancelled.
	Failed map[string]int64 `json:"failed"`
	// FirstError is the first failure's message.
	FirstError string `json:"first_error,omitempty"`
	// SLO is the model's latency objective.
	SLO time.Duration `json:"-"`
	// WithinSLO is how many were answered 200 within the SLO.
	WithinSLO int64 `json:"within_slo"`
	// Goodput is WithinSLO per second of the window.
	Goodput float64 `json:"goodput"`
	// Attainment is WithinSLO over Sent.
	Attainment float64 `json:"slo_attainment"`
	// SendRate is Sent per second of the window.
	SendRate float64 `json:"send_rate"`
	// Latency is the time from sending a request to reading the whole
	// answer, over the requests answered 200.
	Latency Percentiles `json:"latency"`
	// Lag is how late requests were sent against their schedule.
	Lag Percentiles `json:"schedule_lag"`
	// MaxInFlight is the most requests in flight at once.
	MaxInFlight int64 `json:"max_in_flight"`
	// ResponseBytes is the mean size of a 200 answer's body.
	ResponseBytes float64 `json:"mean_response_bytes"`
	// RequestBytes is the size of the request body (compressed, when it
	// was); over gRPC, of the ModelInfer message before compression.
	RequestBytes int `json:"request_bytes"`
	// Seconds follows the window second by second, each second counting
	// the requests that fell due in it: a plan change, a retune or a stall
	// shows as the seconds it cost.
	Seconds []Second `json:"seconds"`
	// Windows is how the run measured in windows (Config.Windows, its
	// defaults filled in), nil for one window. Trials are the windows in
	// the order measured: the counts above are of the last three (those
	// that agreed, when they did), and Stable says whether they agreed.
	Windows *Windows `json:"windows,omitempty"`
	Trials  []Trial  `json:"trials,omitempty"`
	Stable  *bool    `json:"stable,omitempty"`
	// Exported are the requests counted above one by one, in the order
	// their outcomes came, when Config.Export asked for them (at most
	// MaxExported: ExportTruncated says when more were left out);
	// Boundaries are the windows' starts and the last one's end.
	Exported        []ExportedRequest `json:"-"`
	ExportTruncated bool              `json:"-"`
	Boundaries      []time.Time       `json:"-"`
}

// Second is what became of the requests that fell due in one second of a
// run's window.
type Second struct {
	// Due were scheduled; Dropped of them by this client.
	Due     int64 `json:"due"`
	Dropped int64 `json:"dropped,omitempty"`
	// OK were answered 200 (Within of them within the SLO); Failed were not.
	OK     int64 `json:"ok"`
	Within int64 `json:"within_slo"`
	Failed int64 `json:"failed"`
}

// WorstSecond is the second of the window with the smallest share of its
// due requests answered within the SLO, and that share; -1 when no request
// fell due.
func (r *Report) WorstSecond() (int, float64) {
	worst, share := -1, 2.0
	for i, s := range r.Seconds {
		if s.Due == 0 {
			continue
		}
		if f := float64(s.Within) / float64(s.Due); f < share {
			worst, share = i, f
		}
	}
	return worst, share
}

// MarshalJSON adds the durations in readable units.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	return json.Marshal(struct {
		plain
		WindowS float64 `json:"window_s"`
		SLOMS   float64 `json:"slo_ms"`
	}{plain(r), r.Window.Seconds(), float64(r.SLO) / float64(time.Millisecond)})
}

// Percentiles summarises a distribution of durations.
type Percentiles struct {
	Count                         int64
	P50, P90, P95, P99, Max, Mean time.Duration
}

// MarshalJSON writes microseconds.
func (p Percentiles) MarshalJSON() ([]byte, error) {
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	return json.Marshal(map[string]any{
		"count": p.Count, "p50_us": us(p.P50), "p90_us": us(p.P90), "p95_us": us(p.P95), "p99_us": us(p.P99),
		"max_us": us(p.Max), "mean_us": us(p.Mean),
	})
}

// histogram records durations in nanoseconds, 1 ns to 1 h, with three
// significant digits.
func histogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Hour), 3)
}

func record(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(min(max(int64(d), 1), int64(time.Hour))) // cannot fail inside the range
}

func summarize(h *hdrhistogram.Histogram) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	return Percentiles{
		Count: h.TotalCount(),
		P50:   time.Duration(h.ValueAtQuantile(50)),
		P90:   time.Duration(h.ValueAtQuantile(90)),
		P95:   time.Duration(h.ValueAtQuantile(95)),
		P99:   time.Duration(h.ValueAtQuantile(99)),
		Max:   time.Duration(h.Max()),
		Mean:  time.Duration(h.Mean()),
	}
}
