package profiler

import (
	"fmt"
	"math/rand/v2"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// requestInputs builds the input tensors of one request of rows rows from
// the model's per-request specs (as LoadModel returned them): dimension 0 is
// the batch when the model batches, and a dimension the model leaves open
// (-1) takes its size from shapes (the input's dims as Model.Shapes gives
// them), else 1. FP32 inputs are uniform in [-1, 1) from a generator
// seeded by seed, so runs are repeatable; other types are zero.
func requestInputs(specs []*pb.TensorSpec, shapes map[string][]int64, rows int, batching bool, seed uint64) ([]*pb.Tensor, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("build inputs: the model declares no input")
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	out := make([]*pb.Tensor, 0, len(specs))
	for _, s := range specs {
		given := shapes[s.Name]
		shape, err := tensor.FitDims(s.Shape, given)
		if err != nil {
			return nil, fmt.Errorf("build input %q: the shape to profile at, %v, does not fit its dims %v: %v", s.Name, given, s.Shape, err)
		}
		if batching {
			shape = append([]int64{int64(rows)}, shape...)
		}
		dt := tensor.DataType(s.Datatype)
		var t tensor.Tensor
		if dt == tensor.FP32 {
			n, nerr := tensor.NumElements(shape)
			if nerr != nil {
				return nil, fmt.Errorf("build input %q: %w", s.Name, nerr)
			}
			vals := make([]float32, n)
			for i := range vals {
				vals[i] = 2*rng.Float32() - 1
			}
			t, err = tensor.FromFloat32s(s.Name, shape, vals)
		} else {
			t, err = tensor.Zeros(s.Name, dt, shape)
		}
		if err != nil {
			return nil, fmt.Errorf("build input %q: %w", s.Name, err)
		}
		out = append(out, &pb.Tensor{Name: t.Name, Datatype: string(t.DataType), Shape: t.Shape, Data: t.Data})
	}
	return out, nil
}
