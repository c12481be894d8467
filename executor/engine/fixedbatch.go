package engine

import (
	"context"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// FixedBatch loads the model at path on e and runs one batch of rows
// requests of a fixed, deterministic float32 input (values in [-0.5, 0.5)
// that differ per row), then returns the first output of every request,
// flattened. Running it on two engines and comparing the results checks
// that a provider computes what the CPU computes (gpuletd doctor, the GPU
// tests).
func FixedBatch(ctx context.Context, e Engine, name, path string, rows int) ([]float32, error) {
	m, err := e.Load(ctx, ModelSpec{Name: name, Path: path, MaxBatchSize: rows})
	if err != nil {
		return nil, err
	}
	defer func() { _ = m.Close() }()
	in := m.Inputs()[0]
	n, err := tensor.NumElements(in.Shape)
	if err != nil {
		return nil, err
	}
	reqs := make([][]tensor.Tensor, 0, rows)
	for r := range rows {
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32((i*7+r*13)%31)/31 - 0.5
		}
		x, err := tensor.FromFloat32s(in.Name, append([]int64{1}, in.Shape...), vals)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, []tensor.Tensor{x})
	}
	outs, _, err := m.Run(ctx, reqs, nil)
	if err != nil {
		return nil, err
	}
	var flat []float32
	for _, o := range outs {
		v, err := o[0].Float32s()
		if err != nil {
			return nil, err
		}
		flat = append(flat, v...)
	}
	return flat, nil
}
