package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// Every request of a run carries its parameters beside its priority, in
// its JSON over REST and as ModelInfer's typed parameters over gRPC; the
// report names them.
func TestParametersAreSent(t *testing.T) {
	params := []Parameter{{Name: "max_tokens", Value: int64(256)}, {Name: "greedy", Value: true}, {Name: "tag", Value: "a:b"}}
	srv := newFakeServer(t, &fakeServer{})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 200 * time.Millisecond,
		Seed: 5, Binary: true, Priority: 2, Parameters: params})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"max_tokens": int64(256), "greedy": true, "tag": "a:b"}, rep.Parameters)
	require.Empty(t, srv.decodeErrs)
	require.NotEmpty(t, srv.decoded)
	for _, r := range srv.decoded {
		require.Equal(t, int64(2), r.Priority)
		require.Equal(t, "256", string(r.Parameters["max_tokens"]))
		require.Equal(t, "true", string(r.Parameters["greedy"]))
		require.Equal(t, `"a:b"`, string(r.Parameters["tag"]))
	}

	s := &grpcOnlyServer{params: map[string]*tritonpb.ModelParameter{paramSLO: {StringValue: "40ms"}}}
	addr := serveGRPCOnly(t, s)
	_, err = Run(context.Background(), Config{URL: noREST, GRPC: addr, Model: "m", Rate: 200, Duration: 200 * time.Millisecond,
		Seed: 5, Priority: 2, Parameters: params})
	require.NoError(t, err)
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Equal(t, map[string]*pb.InferParameter{
		"max_tokens": {ParameterChoice: &pb.InferParameter_Int64Param{Int64Param: 256}},
		"greedy":     {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}},
		"tag":        {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "a:b"}},
		"priority":   {ParameterChoice: &pb.InferParameter_Uint64Param{Uint64Param: 2}},
	}, s.lastParams)
}

// Parameters a run cannot send as given are refused before it starts.
func TestParametersRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		params   []Parameter
		priority uint64
		err      string
	}{
		{name: "no name", params: []Parameter{{Value: true}}, err: "without a name"},
		{name: "twice", params: []Parameter{{Name: "a", Value: true}, {Name: "a", Value: false}}, err: `"a" given twice`},
		{name: "the run's own", params: []Parameter{{Name: "sequence_id", Value: int64(1)}}, err: `"sequence_id" is one the run sets itself`},
		{name: "a priority twice", params: []Parameter{{Name: "priority", Value: int64(1)}}, priority: 2, err: "give one"},
		{name: "a float", params: []Parameter{{Name: "t", Value: 0.5}}, err: "a float64; give a bool, an integer or a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), Config{URL: noREST, Model: "m", Rate: 1, Duration: time.Second, Priority: tc.priority, Parameters: tc.params})
			require.ErrorIs(t, err, ErrConfig)
			require.ErrorContains(t, err, tc.err)
		})
	}
}
