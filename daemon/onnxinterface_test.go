package daemon

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// The daemon reads model files' inputs and outputs without ONNX Runtime
// (repository.ReadONNXInterface); it must list what ONNX Runtime lists, for
// every tensor form gpuletd serves: every zoo and form model, the
// pipeline's, and a model that lists its weights among its inputs (as
// exports before ONNX IR 4 do).
func TestReadONNXInterfaceMatchesONNXRuntime(t *testing.T) {
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	require.NoError(t, onnxrt.Init(lib))
	dir := t.TempDir()
	names := append(modelzoo.Names(), modelzoo.FormModels()...)
	require.NoError(t, modelzoo.WriteRepository(dir, names, 1))
	pipe := t.TempDir()
	require.NoError(t, modelzoo.WritePipeline(pipe, 1, "100ms", true))
	var files []string
	for _, n := range names {
		files = append(files, filepath.Join(dir, n, modelzoo.ModelVersion, "model.onnx"))
	}
	for _, n := range modelzoo.PipelineModels() {
		files = append(files, filepath.Join(pipe, n, modelzoo.ModelVersion, "model.onnx"))
	}
	// Weights listed as inputs: optional ones ONNX Runtime leaves out.
	m, err := modelzoo.Build("lenet5", 1)
	require.NoError(t, err)
	for _, init := range m.Graph.Initializer {
		dims := slices.Clone(init.Dims)
		m.Graph.Input = append(m.Graph.Input, &onnxpb.ValueInfoProto{Name: init.Name, Type: &onnxpb.TypeProto{
			Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: init.DataType, Shape: shapeOf(dims)}}}})
	}
	b, err := modelzoo.Marshal(m)
	require.NoError(t, err)
	weightsIn := filepath.Join(t.TempDir(), "model.onnx")
	require.NoError(t, os.WriteFile(weightsIn, b, 0o644))
	files = append(files, weightsIn)

	for _, f := range files {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(f))), func(t *testing.T) {
			want, err := onnxrt.ReadModelInfo(f)
			require.NoError(t, err)
			wantIn, wantOut := repository.Specs(want.Inputs), repository.Specs(want.Outputs)
			gotIn, gotOut, err := repository.ReadONNXInterface(f)
			require.NoError(t, err)
			require.Equal(t, normal(wantIn), normal(gotIn))
			require.Equal(t, normal(wantOut), normal(gotOut))
		})
	}
}

// shapeOf is a fixed shape of dims.
func shapeOf(dims []int64) *onnxpb.TensorShapeProto {
	s := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		s.Dim = append(s.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}})
	}
	return s
}

// normal makes a scalar's no dimensions one form.
func normal(specs []repository.TensorSpec) []repository.TensorSpec {
	out := slices.Clone(specs)
	for i := range out {
		if len(out[i].Dims) == 0 {
			out[i].Dims = []int64{}
		}
	}
	return out
}
