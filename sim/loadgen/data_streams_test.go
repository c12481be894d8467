package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/kserve"
	"github.com/stretchr/testify/require"
)

// streamsFile holds two streams for the fake server's model (input x,
// FP32 [1, 4]): one of three requests, one of two, each request's values
// naming its stream and place (11, 12, 13; 21, 22).
const streamsFile = `{"data": [
  [{"x": [11, 0, 0, 0]}, {"x": [12, 0, 0, 0]}, {"x": [13, 0, 0, 0]}],
  [{"x": [21, 0, 0, 0]}, {"x": [22, 0, 0, 0]}]
]}`

// TestDataStreamsAreSequences: a data file's streams go to a stateful
// model as its sequences, each new sequence the next stream in turn, its
// requests in order, the first starting it and the last ending it (over
// gRPC too in the end-to-end TestStatefulModelServesSequences).
func TestDataStreamsAreSequences(t *testing.T) {
	d, err := ParseInputData([]byte(streamsFile))
	require.NoError(t, err)
	require.Equal(t, 2, d.Streams())
	require.Equal(t, 5, d.Len())

	srv := newFakeServer(t, &fakeServer{stateful: true, meta: kserve.ModelMetadata{Name: "m", Versions: []string{"1"},
		Inputs:  []kserve.TensorMetadata{{Name: "x", DataType: "FP32", Shape: []int64{-1, 4}}},
		Outputs: []kserve.TensorMetadata{{Name: "y", DataType: "FP32", Shape: []int64{-1, 4}}}}})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 400 * time.Millisecond, Seed: 1, Sequences: 2, Data: d})
	require.NoError(t, err)
	require.Positive(t, rep.OK)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	byID := map[string][]float32{}
	starts, ends := map[string]bool{}, map[string]bool{}
	for i, s := range srv.seqs {
		byID[s.ID] = append(byID[s.ID], srv.seqValues[i])
		if s.Start {
			starts[s.ID] = true
		}
		if s.End {
			ends[s.ID] = true
		}
	}
	whole := 0
	for id, vals := range byID {
		require.True(t, starts[id], "sequence %s starts", id)
		want := []float32{11, 12, 13}
		if vals[0] == 21 {
			want = []float32{21, 22}
		}
		require.Equal(t, want[:len(vals)], vals, "sequence %s sends its stream in order", id)
		if len(vals) == len(want) {
			whole++
			require.True(t, ends[id], "sequence %s ends with its stream", id)
		}
	}
	require.Greater(t, whole, 10)
	// Each stream in turn: the first sequences take 1, 2, 1, 2…
	require.Equal(t, float32(11), byID["1"][0])
	require.Equal(t, float32(21), byID["2"][0])
}

// TestDataStreamsRefused: streams for a model that is not stateful, or
// with shared memory, and requests for a stateful model, are refused; a
// file of streams and one of requests do not append.
func TestDataStreamsRefused(t *testing.T) {
	streams, err := ParseInputData([]byte(streamsFile))
	require.NoError(t, err)
	plain := newFakeServer(t, &fakeServer{})
	_, err = Run(context.Background(), Config{URL: plain.URL, Model: "m", Rate: 10, Duration: 100 * time.Millisecond, Data: streams})
	require.ErrorIs(t, err, ErrConfig)
	require.ErrorContains(t, err, "the data file holds streams, a stateful model's sequences, and m is not stateful")

	reqs, err := ParseInputData([]byte(`{"data": [{"x": [1, 2, 3, 4]}]}`))
	require.NoError(t, err)
	stateful := newFakeServer(t, &fakeServer{stateful: true})
	_, err = Run(context.Background(), Config{URL: stateful.URL, Model: "m", Rate: 10, Duration: 100 * time.Millisecond, Data: reqs})
	require.ErrorContains(t, err, "or a data file's streams (lists of requests, a sequence each)")

	require.ErrorContains(t, reqs.Append(streams), "one file holds streams (a stateful model's sequences) and another requests")
	more, err := ParseInputData([]byte(streamsFile))
	require.NoError(t, err)
	require.NoError(t, streams.Append(more))
	require.Equal(t, 4, streams.Streams())
}
