package loadgen

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/sim/arrival"
)

// Defaults of Config.
const (
	// AutoBinaryBytes is the JSON request size past which AutoBinary sends
	// binary tensors: 256 KiB, about 25 000 FP32 numbers.
	AutoBinaryBytes    = 256 << 10
	DefaultConcurrency = 256
	DefaultDrain       = 10 * time.Second
	DefaultTimeout     = 30 * time.Second
)

// Bounds of Config: what one client process can hold and send. A run in
// flight holds a slot per request (MaxConcurrency: about 65 000, past
// which the slots alone would take memory a load generator should not);
// MaxRate is far above what a client sends (about 10 000 requests/s
// here), so that a higher one would only count drops.
const (
	MaxConcurrency = 1 << 16
	MaxRate        = 1e6
)

// ErrConfig is wrapped by every error about a Config that cannot run.
var ErrConfig = errors.New("bad load configuration")

// Config is one load run.
type Config struct {
	// URL is the server's base URL, such as http://127.0.0.1:8700.
	URL string
	// GRPC, when set, is the server's gRPC address (host:port): requests go
	// to its ModelInfer with the payload's inputs in raw_input_contents.
	// The model's metadata, configuration and SLO come from it too
	// (ModelMetadata, ModelConfig), and shared memory is registered there,
	// so that URL is not asked anything.
	GRPC string
	// Parameters are request parameters every request carries, in its
	// JSON's parameters or ModelInfer's (perf_analyzer's
	// --request-parameter).
	Parameters []Parameter
	// Streaming sends the gRPC requests over one ModelStreamInfer stream
	// instead of a ModelInfer call each, as perf_analyzer's --streaming;
	// only with GRPC.
	Streaming bool
	// Model is the model to send requests to.
	Model string
	// ModelVersion is the version of Model to send them to (Triton's
	// model_version, perf_analyzer's -x); "": the one the server picks.
	ModelVersion string
	// Rate is the mean request rate, requests per second (a trace spec with
	// a rate scale sets its own).
	Rate float64
	// Duration is how long requests are sent (after Warmup).
	Duration time.Duration
	// Requests, when above 0, ends the run once this many requests were
	// due after the warm-up (sent, or dropped by this client), as
	// perf_analyzer's --request-count, or Duration passed, whichever
	// comes first; the report's window is then the time they took.
	Requests int64
	// Warmup is sent first, on the same schedule, and not recorded: it
	// opens connections and lets the server settle.
	Warmup time.Duration
	// WarmupRequests, when above 0, makes the warm-up last until this many
	// requests fell due in it too (perf_analyzer's --warmup-request-count).
	WarmupRequests int64
	// OnBoundary, when set, is called as the schedule reaches each
	// measurement window's start, with the window's index (0 the first,
	// after the warm-up), and the end of the last, with the number of
	// windows: a caller reads the server's statistics there, so that they
	// span the windows the report counts. The schedule waits for it: it
	// must not block.
	OnBoundary func(i int)
	// Export keeps the requests of the windows reported one by one
	// (Report.Exported): when each was sent and answered, as
	// perf_analyzer's --profile-export-file gives them.
	Export bool
	// Windows, when set, measures in windows of Duration (or of a count of
	// requests) until the last three agree, as perf_analyzer does; nil:
	// one window of Duration.
	Windows *Windows
	// Arrivals is the arrival process (package arrival); nil is Poisson at
	// Rate drawn from Seed.
	Arrivals arrival.Arrivals
	// Seed draws the default Poisson arrivals and the generated inputs.
	Seed uint64
	// ZeroData generates inputs of zeros rather than random values
	// (NewZeroPayload), as perf_analyzer's --input-data zero.
	ZeroData bool
	// Shapes sets, by input name, the dims (without the batch dimension)
	// of generated inputs that have dynamic ones, over the server's
	// profile_shapes (perf_analyzer's --shape); a name the model has no
	// input of is left alone, so that one set serves a mix.
	Shapes map[string][]int64
	// Binary sends the inputs as binary tensors and asks for binary outputs.
	Binary bool
	// AutoBinary sends binary tensors instead of JSON when a JSON request
	// would be over AutoBinaryBytes, as Triton's perf_analyzer sends binary
	// data: decoding megabytes of JSON numbers per request (an image
	// model's input) measures the JSON, on either side, not the server.
	AutoBinary bool
	// SharedMemory places every input and output in a system shared-memory
	// region the run registers with the server (shm.go), which must run on
	// this machine; Payload and Binary are then not used.
	SharedMemory bool
	// CUDASharedMemory makes that region GPU memory the run allocates on
	// device 0 and registers by its CUDA IPC handle (Triton's CUDA
	// shared-memory extension), through the CUDA runtime library
	// CUDARuntime (found by the loader when empty); it implies SharedMemory.
	CUDASharedMemory bool
	CUDARuntime      string
	// BatchSize is the rows of every request, its inputs' dimension 0 (as
	// perf_analyzer's -b); 0 or 1: one. At most the model's max_batch_size,
	// and one for a model that does not batch or is stateful. Not with a
	// given Payload, whose rows are its own.
	BatchSize int
	// Priority is every request's priority parameter, its level among the
	// model's priority levels (1 the highest); 0 sends none.
	Priority uint64
	// Concurrency bounds the requests in flight; a request due while that
	// many are in flight is dropped by the client. 0: DefaultConcurrency.
	// In a closed loop it is the requests always in flight.
	Concurrency int
	// Closed runs a closed loop instead of an arrival process (as
	// perf_analyzer's concurrency mode): Concurrency senders each send a
	// request as soon as their last one is answered; Rate and Arrivals are
	// not used.
	Closed bool
	// Drain is how long to wait for answers after the last request was
	// sent; requests still in flight then are cancelled. 0: DefaultDrain.
	Drain time.Duration
	// Timeout bounds one request. 0: DefaultTimeout.
	Timeout time.Duration
	// Payload is the request body; nil builds one from the model's
	// metadata (NewPayload).
	Payload *Payload
	// StringLength is the length of a generated BYTES element (0: 16),
	// and StringData, when not empty, every such element, as
	// perf_analyzer's --string-length and --string-data.
	StringLength int
	StringData   string
	// Data is perf_analyzer's --input-data file: its requests, built for
	// the model's inputs, are sent in turn. Not with Payload, Inputs or
	// shared memory.
	Data *InputData
	// Inputs is how many distinct requests a run built from the model's
	// metadata sends, in turn, each with its own random inputs (seeds Seed,
	// Seed+1, …); 0 or 1 sends one request every time, as perf_analyzer
	// does. More keep a server's response cache from answering most of
	// them. Not with a given Payload or SharedMemory.
	Inputs int
	// Compression sends every request compressed in this coding, gzip or
	// deflate ("" sends them as they are), and asks for answers in it too,
	// as tritonclient's compression options do: over REST the bodies
	// (Content-Encoding, Accept-Encoding), over gRPC the messages.
	Compression string
	// Sequences and SequenceLength shape the requests of a stateful model
	// (sequencePool): how many sequences are live at once (0: Concurrency
	// in a closed loop, else DefaultSequences) and how many requests each
	// has (0: DefaultSequenceLength), as perf_analyzer's
	// --num-of-sequences and --sequence-length. Other models ignore them.
	Sequences, SequenceLength int
	// SequenceLengthVariation, a fraction, draws each sequence's length
	// evenly within that share of SequenceLength either side
	// (perf_analyzer's --sequence-length-variation over 100); 0: every
	// sequence has SequenceLength.
	SequenceLengthVariation float64
	// SequenceIDStart and SequenceIDEnd bound the sequence IDs
	// (perf_analyzer's --sequence-id-range): from SequenceIDStart (0: 1)
	// and, when SequenceIDEnd is above 0, below it, from the start again,
	// never one still live; the range must hold Sequences IDs at least.
	SequenceIDStart, SequenceIDEnd uint64
	// SLO is the model's latency objective; 0 reads it from the server.
	SLO time.Duration
	// TLS is what a client made here trusts (the system's roots when nil)
	// for an https URL, and what the gRPC connection dials with: with TLS
	// set, gRPC goes over TLS.
	TLS *tls.Config
	// Client sends the requests; nil makes one sized for Concurrency.
	Client *http.Client
	// Header is what every request carries: headers over REST (a Client
	// given carries them itself), metadata over gRPC; such as the daemon's
	// auth.restricted_apis asks for.
	Header map[string]string
	// OKStatus is the HTTP status counted as an answer; 0 is 200. Another
	// value measures an error path (such as 400 for a payload the server
	// decodes and refuses).
	OKStatus int
}

// maxStringLength bounds Config.StringLength: a generated element.
const maxStringLength = 1 << 20

// MaxInputs bounds Config.Inputs: the payloads are all built, and held,
// before the run.
const MaxInputs = 4096

// withDefaults checks c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	c.URL = strings.TrimRight(c.URL, "/")
	switch {
	case !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://"):
		return c, fmt.Errorf("%w: url %q is not an http:// or https:// URL", ErrConfig, c.URL)
	case c.Model == "":
		return c, fmt.Errorf("%w: no model", ErrConfig)
	case !c.Closed && c.Arrivals == nil && (!(c.Rate > 0) || math.IsInf(c.Rate, 0)):
		return c, fmt.Errorf("%w: rate %v requests/s; give a positive rate", ErrConfig, c.Rate)
	case c.Rate > MaxRate:
		return c, fmt.Errorf("%w: rate %v requests/s; give at most %.0f: a client sends far fewer, and the rest would only be counted as dropped", ErrConfig, c.Rate, MaxRate)
	case c.Concurrency > MaxConcurrency:
		return c, fmt.Errorf("%w: concurrency %d; give at most %d requests in flight", ErrConfig, c.Concurrency, MaxConcurrency)
	case c.Duration <= 0:
		return c, fmt.Errorf("%w: duration %s; give a positive duration", ErrConfig, c.Duration)
	case c.Warmup < 0 || c.WarmupRequests < 0 || c.Concurrency < 0 || c.Drain < 0 || c.Timeout < 0 || c.SLO < 0 || c.Requests < 0:
		return c, fmt.Errorf("%w: warmup, warm-up requests, concurrency, drain, timeout, SLO and request count cannot be negative", ErrConfig)
	case c.Windows != nil && c.Requests > 0:
		return c, fmt.Errorf("%w: a request count ends the run's one window: measure in windows or to a count, not both", ErrConfig)
	case c.OKStatus != 0 && (c.OKStatus < 100 || c.OKStatus > 599):
		return c, fmt.Errorf("%w: ok status %d is not an HTTP status", ErrConfig, c.OKStatus)
	case c.Inputs < 0 || c.Inputs > MaxInputs:
		return c, fmt.Errorf("%w: %d distinct inputs; give 1 to %d", ErrConfig, c.Inputs, MaxInputs)
	case c.Compression != "" && c.Compression != CodingGzip && c.Compression != CodingDeflate:
		return c, fmt.Errorf("%w: compression %q; give gzip or deflate", ErrConfig, c.Compression)
	case c.Streaming && c.GRPC == "":
		return c, fmt.Errorf("%w: streaming is a gRPC stream: give the gRPC address too", ErrConfig)
	case c.StringLength < 0 || c.StringLength > maxStringLength:
		return c, fmt.Errorf("%w: string length %d; give 1 to %d", ErrConfig, c.StringLength, maxStringLength)
	case c.BatchSize < 0:
		return c, fmt.Errorf("%w: batch size %d; give 1 or more rows a request", ErrConfig, c.BatchSize)
	case c.BatchSize > 1 && c.Payload != nil:
		return c, fmt.Errorf("%w: a given request has the rows it has; a batch size is for generated ones", ErrConfig)
	case c.Sequences < 0 || c.SequenceLength < 0:
		return c, fmt.Errorf("%w: sequences and sequence length cannot be negative", ErrConfig)
	case c.SequenceLengthVariation < 0 || c.SequenceLengthVariation > 1:
		return c, fmt.Errorf("%w: sequence length variation %g; give 0 to 1 (a share of the length either side)", ErrConfig, c.SequenceLengthVariation)
	case c.SequenceIDEnd > 0 && c.SequenceIDEnd <= max(c.SequenceIDStart, 1):
		return c, fmt.Errorf("%w: sequence IDs from %d below %d: give an end above the start", ErrConfig, max(c.SequenceIDStart, 1), c.SequenceIDEnd)
	case c.Data != nil && (c.Payload != nil || c.Inputs > 1 || c.ZeroData):
		return c, fmt.Errorf("%w: a data file's requests are sent as they are: not with a given payload, distinct inputs or zero data", ErrConfig)
	case c.Data != nil && c.Data.Len() > 1 && (c.SharedMemory || c.CUDASharedMemory):
		return c, fmt.Errorf("%w: the data file holds %d requests, and a shared-memory region holds one: give a file of one, or leave shared memory out", ErrConfig, c.Data.Len())
	case c.Inputs > 1 && (c.Payload != nil || c.SharedMemory || c.CUDASharedMemory):
		return c, fmt.Errorf("%w: distinct inputs are built from the model's metadata, not with a given payload or shared memory (one region holds one request)", ErrConfig)
	}
	if err := c.checkParameters(); err != nil {
		return c, err
	}
	if c.Windows != nil {
		w, err := c.Windows.withDefaults()
		if err != nil {
			return c, err
		}
		c.Windows = &w
	}
	c.SharedMemory = c.SharedMemory || c.CUDASharedMemory
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Drain == 0 {
		c.Drain = DefaultDrain
	}
	if c.Sequences == 0 {
		c.Sequences = DefaultSequences
		if c.Closed {
			c.Sequences = c.Concurrency
		}
	}
	if c.SequenceLength == 0 {
		c.SequenceLength = DefaultSequenceLength
	}
	if c.SequenceIDEnd > 0 && c.SequenceIDEnd-max(c.SequenceIDStart, 1) < uint64(c.Sequences) {
		return c, fmt.Errorf("%w: sequence IDs from %d below %d are %d, fewer than the %d sequences live at once", ErrConfig,
			max(c.SequenceIDStart, 1), c.SequenceIDEnd, c.SequenceIDEnd-max(c.SequenceIDStart, 1), c.Sequences)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.OKStatus == 0 {
		c.OKStatus = http.StatusOK
	}
	if c.Arrivals == nil && !c.Closed {
		a, err := arrival.NewPoisson(c.Rate, c.Seed)
		if err != nil {
			return c, err
		}
		c.Arrivals = a
	}
	return c, nil
}

// NewClient returns an HTTP client for up to concurrency requests in flight
// to one server: that many idle keep-alive connections, no compression,
// tlsConfig's trust for https (nil: the system's roots), and header on
// every request.
func NewClient(concurrency int, tlsConfig *tls.Config, header map[string]string) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if tlsConfig != nil {
		t.TLSClientConfig = tlsConfig.Clone()
		t.TLSClientConfig.NextProtos = nil // HTTP/1.1 alone, as over plain HTTP
	}
	t.MaxIdleConns = concurrency
	t.MaxIdleConnsPerHost = concurrency
	t.DisableCompression = true
	t.ForceAttemptHTTP2 = false
	return WithHeader(&http.Client{Transport: t}, header)
}
