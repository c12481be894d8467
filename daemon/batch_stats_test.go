package daemon

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/kserve"
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
	d := func(count, ns int64) kserve.StatDuration { return kserve.StatDuration{Count: count, NS: ns} }
	require.Equal(t, []kserve.BatchStatistics{
		{BatchSize: 1, ComputeInput: d(2, 0), ComputeInfer: d(2, 220_000), ComputeOutput: d(2, 0)},
		{BatchSize: 4, ComputeInput: d(1, 30_000), ComputeInfer: d(1, 600_000), ComputeOutput: d(1, 9_000)},
	}, b.list())
	p := kserve.ModelStatistics{BatchStats: b.list()}.Proto().BatchStats
	require.Equal(t, uint64(1), p[0].BatchSize)
	require.Equal(t, &pb.StatisticDuration{Count: 2, Ns: 220_000}, p[0].ComputeInfer)
	var none batchStats
	js, err := json.Marshal(none.list())
	require.NoError(t, err)
	require.Equal(t, "[]", string(js), "an empty list, not null, as Triton writes it")
}
