package kserve

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
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
