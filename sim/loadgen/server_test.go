package loadgen

import (
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/sim/arrival"
	"github.com/stretchr/testify/require"
)

// fakeServer is a KServe v2 model server for one model whose answers take a
// known time and whose status the test chooses per request.
type fakeServer struct {
	*httptest.Server
	meta  kserve.ModelMetadata
	slo   time.Duration
	delay func(i int64) time.Duration // i counts infer requests from 0
	code  func(i int64) int
	// reason, when set, gives a failed answer gpuletd's failure reason
	// header.
	reason func(i int64) string
	// tritonConfig answers the model's configuration as Triton does,
	// without gpuletd's slo_ms.
	tritonConfig bool
	// stateful: the model's configuration has sequence_batching; seqs are
	// the sequence parameters of every request in the order they came, and
	// seqOverlap says two requests of one sequence were in flight at once.
	stateful   bool
	seqs       []kserve.SequenceRef
	seqValues  []float32 // each stateful request's first input value, beside seqs
	seqBusy    map[string]int
	seqOverlap bool

	requests    atomic.Int64
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	mu          sync.Mutex
	decodeErrs  []string
	decoded     []*kserve.Request
	codings     map[string]int // requests by Content-Encoding ("" none)
}

func newFakeServer(t *testing.T, f *fakeServer) *fakeServer {
	t.Helper()
	if f.meta.Name == "" {
		f.meta = kserve.ModelMetadata{Name: "m", Versions: []string{"1"},
			Inputs:  []kserve.TensorMetadata{{Name: "x", DataType: "FP32", Shape: []int64{-1, 1, 4, 4}}},
			Outputs: []kserve.TensorMetadata{{Name: "y", DataType: "FP32", Shape: []int64{-1, 10}}}}
	}
	if f.slo == 0 {
		f.slo = time.Second
	}
	if f.delay == nil {
		f.delay = func(int64) time.Duration { return 0 }
	}
	if f.code == nil {
		f.code = func(int64) int { return http.StatusOK }
	}
	f.codings = map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2/models/m", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(f.meta)
	})
	mux.HandleFunc("GET /v2/models/m/config", func(w http.ResponseWriter, _ *http.Request) {
		if f.tritonConfig {
			_ = json.NewEncoder(w).Encode(map[string]any{"name": "m", "max_batch_size": 8})
			return
		}
		cfg := map[string]any{"max_batch_size": 8, "slo_ms": float64(f.slo) / 1e6}
		if f.stateful {
			cfg["sequence_batching"] = map[string]any{}
		}
		_ = json.NewEncoder(w).Encode(cfg)
	})
	mux.HandleFunc("POST /v2/models/m/infer", f.infer)
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) infer(w http.ResponseWriter, r *http.Request) {
	i := f.requests.Add(1) - 1
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxInFlight.Load()
		if n <= m || f.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	var src io.Reader = r.Body
	coding := r.Header.Get("Content-Encoding")
	switch coding {
	case "gzip":
		src, _ = gzip.NewReader(r.Body)
	case "deflate":
		src, _ = zlib.NewReader(r.Body)
	}
	var body []byte
	if src != nil {
		body, _ = io.ReadAll(src)
	}
	jsonLen := int64(-1)
	if h := r.Header.Get(kserve.HeaderContentLength); h != "" {
		jsonLen, _ = strconv.ParseInt(h, 10, 64)
	}
	req, err := kserve.DecodeRequest(body, jsonLen)
	f.mu.Lock()
	f.codings[coding]++
	if err != nil {
		f.decodeErrs = append(f.decodeErrs, err.Error())
	} else if len(f.decoded) < 4 {
		f.decoded = append(f.decoded, req)
	}
	if err == nil && f.stateful {
		f.seqs = append(f.seqs, req.Sequence)
		var first float32
		if vals, verr := req.Inputs[0].Float32s(); verr == nil && len(vals) > 0 {
			first = vals[0]
		}
		f.seqValues = append(f.seqValues, first)
		if f.seqBusy == nil {
			f.seqBusy = map[string]int{}
		}
		f.seqBusy[req.Sequence.ID]++
		f.seqOverlap = f.seqOverlap || f.seqBusy[req.Sequence.ID] > 1
		defer func() {
			f.mu.Lock()
			f.seqBusy[req.Sequence.ID]--
			f.mu.Unlock()
		}()
	}
	f.mu.Unlock()
	select {
	case <-time.After(f.delay(i)):
	case <-r.Context().Done():
		return
	}
	code := f.code(i)
	if f.reason != nil && code != http.StatusOK {
		w.Header().Set(kserve.HeaderFailureReason, f.reason(i))
	}
	if code == http.StatusOK {
		// An answer compressed in the coding the client accepts.
		var out io.Writer = w
		var zw io.WriteCloser
		switch accept := r.Header.Get("Accept-Encoding"); accept {
		case "gzip":
			zw = gzip.NewWriter(w)
		case "deflate":
			zw = zlib.NewWriter(w)
		}
		if zw != nil {
			w.Header().Set("Content-Encoding", r.Header.Get("Accept-Encoding"))
			out = zw
		}
		w.WriteHeader(code)
		_, _ = out.Write([]byte(`{"model_name":"m","outputs":[]}`))
		if zw != nil {
			_ = zw.Close()
		}
	} else {
		w.WriteHeader(code)
		_, _ = w.Write([]byte(`{"error":"no"}`))
	}
}

// due counts the arrivals of a fresh process (same spec and seed as the run's)
// that fall in [from, to) after the start.
func due(t *testing.T, rate float64, seed uint64, from, to time.Duration) int64 {
	t.Helper()
	a, err := arrival.NewPoisson(rate, seed)
	require.NoError(t, err)
	var n int64
	for at := a.Next(); at < to; at += a.Next() {
		if at >= from {
			n++
		}
	}
	return n
}
