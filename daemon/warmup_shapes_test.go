package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// TestWarmupShapes: executors warm a model up at its profile_shapes, for
// the inputs they see as the configuration gives them; one with a reshape
// is seen in the model file's shape and keeps its open dims at 1.
func TestWarmupShapes(t *testing.T) {
	m := &repository.Model{
		Config: repository.ModelConfig{ProfileShapes: map[string][]int64{"ids": {128}, "mask": {128}}},
		Inputs: []repository.TensorSpec{
			{Name: "ids", DataType: tensor.Int64, Dims: []int64{-1}},
			{Name: "mask", DataType: tensor.Int64, Dims: []int64{-1}, Reshape: []int64{1, -1}},
			{Name: "type", DataType: tensor.Int64, Dims: []int64{-1}},
		},
	}
	require.Equal(t, map[string][]int64{"ids": {128}}, warmupShapes(m))
	require.Empty(t, warmupShapes(&repository.Model{Inputs: m.Inputs}), "no profile_shapes: every open dim at 1")
}
