package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
)

// A request is checked against the model at the door, every problem named:
// the executor is not asked about a request that cannot run.
func TestCheckInputs(t *testing.T) {
	pair := &repository.Model{Name: "pair", Config: repository.ModelConfig{MaxBatchSize: 4},
		Inputs: []repository.TensorSpec{
			{Name: "image", DataType: tensor.FP32, Dims: []int64{3, -1}},
			{Name: "mask", DataType: tensor.Bool, Dims: []int64{2}},
		},
		Outputs: []repository.TensorSpec{{Name: "score", DataType: tensor.FP32, Dims: []int64{1}}}}
	single := &repository.Model{Name: "single", Config: repository.ModelConfig{MaxBatchSize: 0},
		Inputs:  []repository.TensorSpec{{Name: "x", DataType: tensor.Int64, Dims: []int64{2, 2}}},
		Outputs: []repository.TensorSpec{{Name: "y", DataType: tensor.Int64, Dims: []int64{1}}}}
	in := func(name string, dt tensor.DataType, shape ...int64) tensor.Tensor {
		return tensor.Tensor{Name: name, DataType: dt, Shape: shape}
	}
	tests := []struct {
		name    string
		model   *repository.Model
		inputs  []tensor.Tensor
		outputs []string
		err     string
	}{
		{name: "a batch of two", model: pair, inputs: []tensor.Tensor{in("image", tensor.FP32, 2, 3, 7), in("mask", tensor.Bool, 2, 2)}, outputs: []string{"score"}},
		{name: "missing input", model: pair, inputs: []tensor.Tensor{in("image", tensor.FP32, 1, 3, 7)}, err: `input "mask" is missing (the model takes "image", "mask")`},
		{name: "a wrong name", model: pair, inputs: []tensor.Tensor{in("image", tensor.FP32, 1, 3, 7), in("masks", tensor.Bool, 1, 2)},
			err: `the model has no input "masks" (it takes "image", "mask")`},
		{name: "wrong data type", model: pair, inputs: []tensor.Tensor{in("image", tensor.FP16, 1, 3, 7), in("mask", tensor.Bool, 1, 2)},
			err: `input "image" is FP16, the model takes FP32`},
		{name: "no batch dimension", model: pair, inputs: []tensor.Tensor{in("image", tensor.FP32), in("mask", tensor.Bool, 1, 2)},
			err: "dimension 0 is the batch, 1 to 4"},
		{name: "batch above max_batch_size", model: pair, inputs: []tensor.Tensor{in("image", tensor.FP32, 5, 3, 7), in("mask", tensor.Bool, 5, 2)},
			err: "dimension 0 is the batch, 1 to 4"},
		{name: "batches that differ", model: pair, inputs: []tensor.Tensor{in("image", tensor.FP32, 2, 3, 7), in("mask", tensor.Bool, 3, 2)},
			err: `input "mask" has a batch of 3, input "image" of 2`},
		{name: "wrong shape", model: pair, inputs: []tensor.Tensor{in("image", tensor.FP32, 1, 4, 7), in("mask", tensor.Bool, 1, 2)},
			err: `input "image" has shape [1 4 7], the model takes [-1 3 -1]`},
		{name: "unknown input", model: pair, inputs: []tensor.Tensor{in("image", tensor.FP32, 1, 3, 7), in("mask", tensor.Bool, 1, 2), in("extra", tensor.FP32, 1)},
			err: `the model has no input "extra" (it takes "image", "mask")`},
		{name: "unknown output", model: pair, inputs: []tensor.Tensor{in("image", tensor.FP32, 1, 3, 7), in("mask", tensor.Bool, 1, 2)}, outputs: []string{"logits"},
			err: `the model has no output "logits" (it gives "score")`},
		{name: "a model that does not batch", model: single, inputs: []tensor.Tensor{in("x", tensor.Int64, 2, 2)}},
		{name: "a model that does not batch, given a batch", model: single, inputs: []tensor.Tensor{in("x", tensor.Int64, 1, 2, 2)},
			err: `input "x" has shape [1 2 2], the model takes [2 2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &kserve.Request{Inputs: tt.inputs}
			for _, o := range tt.outputs {
				req.Outputs = append(req.Outputs, kserve.OutputRequest{Name: o})
			}
			err := checkInputs(tt.model, req)
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.err)
		})
	}
}
