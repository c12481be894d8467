package kserve

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// TestResponseStatsAsTritonWritesThem: a decoupled model's response_stats
// as Triton's JSON gives them are read, and carried into gRPC's form.
func TestResponseStatsAsTritonWritesThem(t *testing.T) {
	const triton = `{"name": "m", "version": "1", "response_stats": {"0": {"compute_infer": {"count": 2, "ns": 30},
		"success": {"count": 2, "ns": 40}, "empty_response": {"count": 1, "ns": 5}, "cancel": {"count": 0, "ns": 0}}}}`
	var s ModelStatistics
	require.NoError(t, json.Unmarshal([]byte(triton), &s))
	require.Equal(t, StatDuration{Count: 2, NS: 40}, s.ResponseStats["0"][StatSuccess])
	p := s.Proto().ResponseStats["0"]
	require.NotNil(t, p)
	require.Equal(t, []uint64{2, 30, 2, 40, 1, 5, 0}, []uint64{p.ComputeInfer.Count, p.ComputeInfer.Ns,
		p.Success.Count, p.Success.Ns, p.EmptyResponse.Count, p.EmptyResponse.Ns, p.Fail.Count})
	require.Empty(t, ModelStatistics{}.Proto().ResponseStats)
}

// TestStatisticsFromProto: statistics read back from gRPC's form are those
// that went into it, every counter in its place.
func TestStatisticsFromProto(t *testing.T) {
	dur := func(n int64) StatDuration { return StatDuration{Count: n, NS: 1000 * n} }
	s := ModelStatistics{Name: "m", Version: "2", LastInference: 17, InferenceCount: 40, ExecutionCount: 9,
		InferenceStats: map[string]StatDuration{StatSuccess: dur(1), StatFail: dur(2), StatQueue: dur(3), StatComputeInput: dur(4),
			StatComputeInfer: dur(5), StatComputeOutput: dur(6), StatCacheHit: dur(7), StatCacheMiss: dur(8)},
		BatchStats:  []BatchStatistics{{BatchSize: 4, ComputeInput: dur(9), ComputeInfer: dur(10), ComputeOutput: dur(11)}},
		MemoryUsage: []MemoryUsage{{Type: "GPU", ID: 1, ByteSize: 1 << 20}},
		ResponseStats: map[string]map[string]StatDuration{"0": {StatComputeInfer: dur(12), StatComputeOutput: dur(13),
			StatSuccess: dur(14), StatFail: dur(15), StatEmptyResponse: dur(16)}},
	}
	require.Equal(t, s, StatisticsFromProto(s.Proto()))
	empty := StatisticsFromProto(&pb.ModelStatistics{Name: "m"})
	require.Equal(t, "m", empty.Name)
	require.Zero(t, empty.InferenceStats[StatSuccess], "a message without its counters reads as none")
}
