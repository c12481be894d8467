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

// drive runs the pool's sequences to their ends, n requests in all, the
// free sequence taken each time (as the workers take them), and returns
// every sequence's ID and length in the order they ended.
func drive(t *testing.T, p *sequencePool, n int) (ids []uint64, lengths []int) {
	t.Helper()
	for range n {
		s, err := p.take(context.Background())
		require.NoError(t, err)
		_, end := p.flags(s)
		if end {
			ids, lengths = append(ids, s.id), append(lengths, s.length)
		}
		p.give(s, true)
	}
	return ids, lengths
}

// TestSequenceLengthsVary: with a variation, each sequence's length is
// drawn within that share of the length either side, and they differ;
// without, every one has the length.
func TestSequenceLengthsVary(t *testing.T) {
	cfg, err := Config{URL: "http://x", Model: "m", Rate: 1, Duration: time.Second, Sequences: 2, SequenceLength: 10, SequenceLengthVariation: 0.2, Seed: 1}.withDefaults()
	require.NoError(t, err)
	_, lengths := drive(t, newSequencePool(cfg, nil), 2000)
	seen := map[int]bool{}
	for _, l := range lengths {
		require.GreaterOrEqual(t, l, 8)
		require.LessOrEqual(t, l, 12)
		seen[l] = true
	}
	require.Len(t, seen, 5, "8 to 12 all drawn: %v", seen)
	cfg.SequenceLengthVariation = 0
	_, lengths = drive(t, newSequencePool(cfg, nil), 200)
	for _, l := range lengths {
		require.Equal(t, 10, l)
	}
	cfg.SequenceLength, cfg.SequenceLengthVariation = 1, 1
	_, lengths = drive(t, newSequencePool(cfg, nil), 50)
	for _, l := range lengths {
		require.Contains(t, []int{1, 2}, l, "at least one request")
	}
}

// TestSequenceIDRange: IDs run from the range's start below its end and
// then from the start again, passing over one still live; a range too small
// for the live sequences, or empty, is refused.
func TestSequenceIDRange(t *testing.T) {
	cfg, err := Config{URL: "http://x", Model: "m", Rate: 1, Duration: time.Second, Sequences: 2, SequenceLength: 1, SequenceIDStart: 5, SequenceIDEnd: 8}.withDefaults()
	require.NoError(t, err)
	ids, _ := drive(t, newSequencePool(cfg, nil), 7)
	require.Equal(t, []uint64{5, 6, 7, 5, 6, 7, 5}, ids)

	// One sequence stays live (a long one) while the other turns over:
	// its ID is passed over.
	cfg.SequenceLength = 3
	p := newSequencePool(cfg, nil)
	long, err := p.take(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(5), long.id)
	var other []uint64
	for range 12 {
		s, err := p.take(context.Background())
		require.NoError(t, err)
		if s.step == 0 {
			other = append(other, s.id)
		}
		p.give(s, true)
	}
	require.Equal(t, []uint64{6, 7, 6, 7}, other, "5 is live")

	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Sequences: 4, SequenceIDStart: 1, SequenceIDEnd: 4}, "sequence IDs from 1 below 4 are 3, fewer than the 4 sequences live at once"},
		{Config{Sequences: 1, SequenceIDStart: 9, SequenceIDEnd: 9}, "sequence IDs from 9 below 9: give an end above the start"},
		{Config{Sequences: 1, SequenceLengthVariation: 1.5}, "sequence length variation 1.5"},
	} {
		c := tc.cfg
		c.URL, c.Model, c.Rate, c.Duration = "http://x", "m", 1, time.Second
		_, err := c.withDefaults()
		require.ErrorIs(t, err, ErrConfig)
		require.ErrorContains(t, err, tc.want)
	}
}
