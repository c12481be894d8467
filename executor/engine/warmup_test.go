package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// Each size runs twice: its timing is the second run's compute, the
// smaller overhead of the two (a collection pause in either run is not
// taken for the size's cost) and the set-up of both.
func TestWarmupKeepsSteadyTimes(t *testing.T) {
	l, err := newLayout("m", 8, []TensorSpec{{Name: "x", DataType: tensor.FP32, Shape: []int64{4}}},
		[]TensorSpec{{Name: "y", DataType: tensor.FP32, Shape: []int64{4}}})
	require.NoError(t, err)
	us := func(n int) time.Duration { return time.Duration(n) * time.Microsecond }
	runs := []RunInfo{
		{Compute: us(900), Overhead: us(50), Setup: us(7000)}, // batch 1: first use
		{Compute: us(100), Overhead: us(10)},
		{Compute: us(400), Overhead: us(20)}, // batch 4: a pause in the second run
		{Compute: us(300), Overhead: us(5000)},
	}
	var rows []int
	run := func(_ context.Context, reqs [][]tensor.Tensor, _ []string) ([][]tensor.Tensor, RunInfo, error) {
		rows = append(rows, len(reqs))
		info := runs[0]
		runs = runs[1:]
		return nil, info, nil
	}
	res, err := warmup(context.Background(), l, []int{1, 4}, run)
	require.NoError(t, err)
	require.Equal(t, []int{1, 1, 4, 4}, rows)
	require.Equal(t, []BatchTiming{
		{Batch: 1, Compute: us(100), Overhead: us(10), Setup: us(7000)},
		{Batch: 4, Compute: us(300), Overhead: us(20)},
	}, res.Batches)
}
