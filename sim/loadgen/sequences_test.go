package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

func TestWithSequenceKeepsTheRequest(t *testing.T) {
	m := &Model{Metadata: kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{{Name: "x", DataType: "FP32", Shape: []int64{-1, 4}}}}, MaxBatchSize: 8}
	for _, bin := range []bool{false, true} {
		p, err := newPayload(m, bin, 1, false)
		require.NoError(t, err)
		plain, err := kserve.DecodeRequest(p.Body, p.JSONLen)
		require.NoError(t, err)
		before := append([]byte(nil), p.Body...)
		s := p.withSequence(42, true, false)
		require.Equal(t, before, p.Body, "the payload is not changed")
		got, err := kserve.DecodeRequest(s.Body, s.JSONLen)
		require.NoError(t, err, "binary %v: %s", bin, s.Body)
		require.Equal(t, kserve.SequenceRef{ID: "42", Numeric: true, Number: 42, Start: true}, got.Sequence)
		require.Equal(t, plain.Inputs, got.Inputs)
		require.Equal(t, plain.BinaryOutputs, got.BinaryOutputs)
	}

	r := &pb.ModelInferRequest{ModelName: "m", Parameters: map[string]*pb.InferParameter{"priority": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 1}}}}
	g := grpcWithSequence(r, 7, false, true)
	got, err := kserve.DecodeGRPCRequest(&pb.ModelInferRequest{ModelName: "m", Parameters: g.Parameters,
		Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "x", Datatype: "FP32", Shape: []int64{1}, Contents: &pb.InferTensorContents{Fp32Contents: []float32{1}}}}})
	require.NoError(t, err)
	require.Equal(t, kserve.SequenceRef{ID: "7", Numeric: true, Number: 7, End: true}, got.Sequence)
	require.Equal(t, int64(1), got.Priority)
	require.Len(t, r.Parameters, 1, "the shared request is not changed")
}

// TestStatefulModelsRequestsGoInSequences: a run of a stateful model sends
// each request in one of its live sequences, one in flight at a time, the
// first starting it and the last ending it; a failed request's sequence is
// left for a new one.
func TestStatefulModelsRequestsGoInSequences(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{stateful: true, delay: func(int64) time.Duration { return 5 * time.Millisecond },
		code: func(i int64) int {
			if i == 10 {
				return http.StatusServiceUnavailable
			}
			return http.StatusOK
		}})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 300, Duration: 500 * time.Millisecond, Seed: 3, Sequences: 3, SequenceLength: 4})
	require.NoError(t, err)
	require.Equal(t, 3, rep.Sequences)
	require.Equal(t, 4, rep.SequenceLength)
	require.Equal(t, int64(1), rep.Failed["503"])
	require.LessOrEqual(t, srv.maxInFlight.Load(), int64(3), "requests wait for a free sequence")

	srv.mu.Lock()
	defer srv.mu.Unlock()
	require.False(t, srv.seqOverlap, "a sequence has one request in flight at a time")
	require.Greater(t, len(srv.seqs), 20)
	byID := map[string][]kserve.SequenceRef{}
	for _, s := range srv.seqs {
		byID[s.ID] = append(byID[s.ID], s)
	}
	cut := 0
	for id, reqs := range byID {
		require.True(t, reqs[0].Start, "sequence %s starts on its first request", id)
		for k, r := range reqs {
			require.Equal(t, k == 0, r.Start, "sequence %s request %d", id, k)
			require.Equal(t, k == 3, r.End, "sequence %s request %d", id, k)
		}
		require.LessOrEqual(t, len(reqs), 4)
		if len(reqs) < 4 {
			cut++ // failed, or still open when the run ended
		}
	}
	require.LessOrEqual(t, cut, 3+1, "the sequences open at the end, and the one that failed")
}

// TestAPipelineOfAStatefulStepIsStateful: a pipeline one of whose steps is
// a stateful model takes its requests in sequences, as perf_analyzer finds
// from the composing models.
func TestAPipelineOfAStatefulStepIsStateful(t *testing.T) {
	mux := http.NewServeMux()
	meta := `{"name":"p","versions":["1"],"inputs":[{"name":"x","datatype":"FP32","shape":[-1,4]}],"outputs":[{"name":"y","datatype":"FP32","shape":[-1,4]}]}`
	for _, m := range []string{"p", "plain"} {
		mux.HandleFunc("GET /v2/models/"+m, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(meta)) })
	}
	mux.HandleFunc("GET /v2/models/p/config", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"max_batch_size":8,"slo_ms":50,"ensemble_scheduling":{"step":[{"model_name":"pre"},{"model_name":"sum"}]}}`))
	})
	mux.HandleFunc("GET /v2/models/plain/config", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"max_batch_size":8,"slo_ms":50,"ensemble_scheduling":{"step":[{"model_name":"pre"}]}}`))
	})
	mux.HandleFunc("GET /v2/models/pre/config", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"max_batch_size":8}`)) })
	mux.HandleFunc("GET /v2/models/sum/config", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"max_batch_size":8,"sequence_batching":{}}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	m, err := FetchModel(context.Background(), srv.Client(), srv.URL, "p", "")
	require.NoError(t, err)
	require.True(t, m.Stateful)
	m, err = FetchModel(context.Background(), srv.Client(), srv.URL, "plain", "")
	require.NoError(t, err)
	require.False(t, m.Stateful)
}
