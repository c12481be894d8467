package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// TestOutputsNotBatchedAreRefusedAtWarmup: a model configured to batch
// whose output is not batched along its first dimension (the indices of
// its input's non-zero elements, [K,2] for any K) fails its warm-up with
// why and what to do, not with the runtime's complaint about an output of
// the batch's shape; served without batching it runs.
func TestOutputsNotBatchedAreRefusedAtWarmup(t *testing.T) {
	e := newCPU(t, 1)
	f32, i64 := onnxpb.TensorProto_FLOAT, onnxpb.TensorProto_INT64
	path := writeGraph(t, "nonzero",
		[]value{{"x", f32, []any{"N", 4}}},
		[]value{{"idx", i64, []any{"K", 2}}},
		op("NonZero", []string{"x"}, "nz"),
		op("Transpose", []string{"nz"}, "idx"))
	ctx := context.Background()

	m, err := e.Load(ctx, ModelSpec{Name: "nonzero", Path: path, MaxBatchSize: 8})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	_, err = m.Warmup(ctx, []int{1})
	require.ErrorIs(t, err, ErrInvalidSpec)
	require.ErrorContains(t, err, `output "idx" has shape [0 2] for a batch of one row: its first dimension is not the batch`)
	require.ErrorContains(t, err, "max_batch_size: 0")

	one, err := e.Load(ctx, ModelSpec{Name: "nonzero", Path: path})
	require.NoError(t, err)
	defer func() { require.NoError(t, one.Close()) }()
	_, err = one.Warmup(ctx, []int{1})
	require.NoError(t, err)
	x, err := tensor.FromFloat32s("x", []int64{2, 4}, []float32{1, 0, 0, 1, 0, 0, 2, 0})
	require.NoError(t, err)
	outs, _, err := one.Run(ctx, [][]tensor.Tensor{{x}}, nil)
	require.NoError(t, err)
	require.Equal(t, []int64{3, 2}, outs[0][0].Shape, "three non-zero elements")
}
