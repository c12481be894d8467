package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// Triton's batch_stats from answers: a batch counts once, whole, when its
// answers are all in, with its times once.
func TestBatchStatsCountBatchesFromTheirAnswers(t *testing.T) {
	var b batchStats
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	r := execReport{input: us(30), compute: us(600), output: us(9)}
	// A batch of 4 rows: a request of 2 and two of 1.
	b.add(4, 0.25, r)
	require.Empty(t, b.list(), "a quarter of a batch of 4 is none yet (counts round, as execution_count's)")
	b.add(4, 0.5, r)
	b.add(4, 0.25, r)
	// Two batches of one row, each its own request.
	b.add(1, 1, execReport{compute: us(100)})
	b.add(1, 1, execReport{compute: us(120)})
	require.Equal(t, []batchStat{
		{size: 1, count: 2, inferNS: 220_000},
		{size: 4, count: 1, inputNS: 30_000, inferNS: 600_000, outNS: 9_000},
	}, b.list())

	j := b.json()
	require.Len(t, j, 2)
	require.Equal(t, map[string]any{"batch_size": int32(4), "compute_input": map[string]int64{"count": 1, "ns": 30_000},
		"compute_infer": map[string]int64{"count": 1, "ns": 600_000}, "compute_output": map[string]int64{"count": 1, "ns": 9_000}}, j[1])
	p := b.proto()
	require.Equal(t, uint64(1), p[0].BatchSize)
	require.Equal(t, &pb.StatisticDuration{Count: 2, Ns: 220_000}, p[0].ComputeInfer)
	var none batchStats
	require.Equal(t, []map[string]any{}, none.json(), "an empty list, not null, as Triton writes it")
}
