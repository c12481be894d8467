package onnxrt

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

func TestRunFloat32(t *testing.T) {
	initORT(t)
	path, _ := writeZooModel(t, "mlp")
	in := Float32Tensor{Shape: []int64{2, 784}, Data: make([]float32, 2*784)}
	for i := range in.Data {
		in.Data[i] = float32(i%97) / 97
	}
	outs, err := RunFloat32(path, map[string]Float32Tensor{"input": in}, 1)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	out := outs["output"]
	require.Equal(t, []int64{2, 10}, out.Shape)
	require.Len(t, out.Data, 20)
	for _, v := range out.Data {
		require.False(t, math.IsNaN(float64(v)))
	}
	again, err := RunFloat32(path, map[string]Float32Tensor{"input": in}, 0)
	require.NoError(t, err)
	require.Equal(t, out, again["output"], "same model, same input, same output")

	_, err = RunFloat32(path, map[string]Float32Tensor{"x": in}, 1)
	require.ErrorContains(t, err, `missing input "input"`)
	_, err = RunFloat32(path, map[string]Float32Tensor{"input": in, "x": in}, 1)
	require.ErrorContains(t, err, "got 2 inputs")
	bad := Float32Tensor{Shape: []int64{2, 784}, Data: in.Data[:10]}
	_, err = RunFloat32(path, map[string]Float32Tensor{"input": bad}, 1)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "\n")
}

// identityModel writes a one-node Identity graph whose input and output
// have the given ONNX element type.
func identityModel(t *testing.T, elemType onnxpb.TensorProto_DataType) string {
	t.Helper()
	info := func(name string) *onnxpb.ValueInfoProto {
		return &onnxpb.ValueInfoProto{Name: name, Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
			TensorType: &onnxpb.TypeProto_Tensor{ElemType: int32(elemType), Shape: &onnxpb.TensorShapeProto{Dim: []*onnxpb.TensorShapeProto_Dimension{
				{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "N"}},
				{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: 3}},
			}}},
		}}}
	}
	m := &onnxpb.ModelProto{
		// Identity has float8 types from opset 19 (IR version 9).
		IrVersion:   9,
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: 19}},
		Graph: &onnxpb.GraphProto{
			Name:   "identity",
			Node:   []*onnxpb.NodeProto{{OpType: "Identity", Input: []string{"x"}, Output: []string{"y"}}},
			Input:  []*onnxpb.ValueInfoProto{info("x")},
			Output: []*onnxpb.ValueInfoProto{info("y")},
		},
	}
	b, err := proto.Marshal(m)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "identity.onnx")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

func TestReadModelInfoDataTypes(t *testing.T) {
	initORT(t)
	tests := []struct {
		elem    onnxpb.TensorProto_DataType
		want    tensor.DataType
		wantErr error
	}{
		{elem: onnxpb.TensorProto_FLOAT, want: tensor.FP32},
		{elem: onnxpb.TensorProto_FLOAT16, want: tensor.FP16},
		{elem: onnxpb.TensorProto_DOUBLE, want: tensor.FP64},
		{elem: onnxpb.TensorProto_INT64, want: tensor.Int64},
		{elem: onnxpb.TensorProto_UINT8, want: tensor.Uint8},
		{elem: onnxpb.TensorProto_BOOL, want: tensor.Bool},
		{elem: onnxpb.TensorProto_STRING, want: tensor.Bytes},
		{elem: onnxpb.TensorProto_BFLOAT16, want: tensor.BF16},
		{elem: onnxpb.TensorProto_FLOAT8E4M3FN, wantErr: ErrUnsupportedType},
	}
	for _, tt := range tests {
		t.Run(tt.elem.String(), func(t *testing.T) {
			path := identityModel(t, tt.elem)
			info, err := ReadModelInfo(path)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				require.Contains(t, err.Error(), path)
				require.Contains(t, err.Error(), `input x`)
				return
			}
			require.NoError(t, err)
			require.Equal(t, ModelInfo{
				Inputs:  []TensorInfo{{Name: "x", DataType: tt.want, Shape: []int64{-1, 3}}},
				Outputs: []TensorInfo{{Name: "y", DataType: tt.want, Shape: []int64{-1, 3}}},
			}, info)
		})
	}
}
