package loadgen

import (
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

	requests    atomic.Int64
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	mu          sync.Mutex
	decodeErrs  []string
	decoded     []*kserve.Request
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
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2/models/m", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(f.meta)
	})
	mux.HandleFunc("GET /v2/models/m/config", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"max_batch_size": 8, "slo_ms": float64(f.slo) / 1e6})
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
	body, _ := io.ReadAll(r.Body)
	jsonLen := int64(-1)
	if h := r.Header.Get(kserve.HeaderContentLength); h != "" {
		jsonLen, _ = strconv.ParseInt(h, 10, 64)
	}
	req, err := kserve.DecodeRequest(body, jsonLen)
	f.mu.Lock()
	if err != nil {
		f.decodeErrs = append(f.decodeErrs, err.Error())
	} else if len(f.decoded) < 4 {
		f.decoded = append(f.decoded, req)
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
	w.WriteHeader(code)
	if code == http.StatusOK {
		_, _ = w.Write([]byte(`{"model_name":"m","outputs":[]}`))
	} else {
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
