package modelzoo_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/modelzoo"
)

// randomInput returns a batch of uniform [0,1) inputs for m.
func randomInput(m modelzoo.Model, batch int, seed uint64) onnxrt.Float32Tensor {
	shape := append([]int64{int64(batch)}, m.InputShape[1:]...)
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	data := make([]float32, n)
	for i := range data {
		data[i] = rng.Float32()
	}
	return onnxrt.Float32Tensor{Shape: shape, Data: data}
}

// row returns sample i of a batch as a batch of one.
func row(t onnxrt.Float32Tensor, i int) onnxrt.Float32Tensor {
	per := len(t.Data) / int(t.Shape[0])
	shape := append([]int64{1}, t.Shape[1:]...)
	return onnxrt.Float32Tensor{Shape: shape, Data: t.Data[i*per : (i+1)*per]}
}

// TestModelsRunInOnnxRuntime loads every model in onnxruntime and runs it at
// batch 1 and 8: the output has the declared shape, is finite and not
// constant, and each sample's output in the batch of 8 matches running that
// sample alone (the batch dimension really is independent samples).
func TestModelsRunInOnnxRuntime(t *testing.T) {
	initORT(t)
	for _, name := range modelzoo.Names() {
		t.Run(name, func(t *testing.T) {
			m, err := modelzoo.Lookup(name)
			require.NoError(t, err)
			path := writeModel(t, name, 3)

			in8 := randomInput(m, 8, 11)
			out8 := run(t, path, m, in8)
			require.Equal(t, append([]int64{8}, m.OutputShape[1:]...), out8.Shape)
			requireFiniteAndVaried(t, out8.Data)

			per := len(out8.Data) / 8
			for _, i := range []int{0, 5} {
				out1 := run(t, path, m, row(in8, i))
				require.Equal(t, append([]int64{1}, m.OutputShape[1:]...), out1.Shape)
				requireFiniteAndVaried(t, out1.Data)
				requireClose(t, out8.Data[i*per:(i+1)*per], out1.Data)
			}
			// Different samples give different outputs.
			require.NotEqual(t, out8.Data[:per], out8.Data[per:2*per])
		})
	}
}

func run(t *testing.T, path string, m modelzoo.Model, in onnxrt.Float32Tensor) onnxrt.Float32Tensor {
	t.Helper()
	outs, err := onnxrt.RunFloat32(path, map[string]onnxrt.Float32Tensor{m.InputName: in}, 2)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	out, ok := outs[m.OutputName]
	require.True(t, ok, "no output %q", m.OutputName)
	return out
}

func requireFiniteAndVaried(t *testing.T, data []float32) {
	t.Helper()
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range data {
		f := float64(v)
		require.False(t, math.IsNaN(f) || math.IsInf(f, 0), "non-finite output")
		lo, hi = math.Min(lo, f), math.Max(hi, f)
	}
	require.Greater(t, hi-lo, 1e-6, "constant output")
	// Scaled initialisation keeps outputs in a sane range.
	require.Less(t, math.Max(math.Abs(lo), math.Abs(hi)), 1e3)
}

// requireClose compares two outputs with a tolerance relative to their
// largest magnitude (convolution algorithms may differ per batch size).
func requireClose(t *testing.T, want, got []float32) {
	t.Helper()
	require.Len(t, got, len(want))
	scale := 0.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	for i := range want {
		require.InDelta(t, want[i], got[i], 1e-4*scale+1e-6, "element %d", i)
	}
}

// TestExternalDataRunsAsInline writes each demo model with its weights in
// ExternalDataFile: ONNX Runtime reads them from there, and the answers
// equal those of the same model in one file.
func TestExternalDataRunsAsInline(t *testing.T) {
	initORT(t)
	inline, split := t.TempDir(), t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(inline, nil, 3))
	require.NoError(t, modelzoo.WriteRepository(split, nil, 3, modelzoo.WithExternalData()))
	for _, name := range modelzoo.DemoModels() {
		t.Run(name, func(t *testing.T) {
			m, err := modelzoo.Lookup(name)
			require.NoError(t, err)
			file := filepath.Join(split, name, modelzoo.ModelVersion, "model.onnx")
			data, err := os.Stat(filepath.Join(split, name, modelzoo.ModelVersion, modelzoo.ExternalDataFile))
			require.NoError(t, err)
			whole, err := os.Stat(filepath.Join(inline, name, modelzoo.ModelVersion, "model.onnx"))
			require.NoError(t, err)
			own, err := os.Stat(file)
			require.NoError(t, err)
			require.Less(t, own.Size(), whole.Size()/10, "the weights left the model file")
			require.Greater(t, data.Size(), whole.Size()*9/10)

			in := randomInput(m, 2, 5)
			want := run(t, filepath.Join(inline, name, modelzoo.ModelVersion, "model.onnx"), m, in)
			got := run(t, file, m, in)
			require.Equal(t, want.Shape, got.Shape)
			requireClose(t, want.Data, got.Data)
		})
	}
}
