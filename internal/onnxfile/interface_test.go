package onnxfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// tensorValue declares a tensor value; a dimension of -1 is symbolic ("N").
func tensorValue(name string, elem int32, dims ...int64) *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		dim := &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}}
		if d < 0 {
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "N"}
		}
		shape.Dim = append(shape.Dim, dim)
	}
	return &onnxpb.ValueInfoProto{Name: name, Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: elem, Shape: shape}}}}
}

// withGraphField is model's bytes with one more field of its graph: a raw
// ValueInfoProto at field num (11 input, 12 output).
func withGraphField(t *testing.T, m *onnxpb.ModelProto, num protowire.Number, value []byte) []byte {
	t.Helper()
	graph := marshal(t, m.Graph)
	graph = protowire.AppendBytes(protowire.AppendTag(graph, num, protowire.BytesType), value)
	return protowire.AppendBytes(protowire.AppendTag(nil, 7, protowire.BytesType), graph)
}

func TestReadInterface(t *testing.T) {
	weight := &onnxpb.TensorProto{Name: "w", DataType: 1, Dims: []int64{2}, RawData: make([]byte, 8)}
	model := func(inputs []*onnxpb.ValueInfoProto, outputs ...*onnxpb.ValueInfoProto) *onnxpb.ModelProto {
		return &onnxpb.ModelProto{IrVersion: 8, Graph: &onnxpb.GraphProto{Name: "g", Initializer: []*onnxpb.TensorProto{weight},
			Input: inputs, Output: outputs}}
	}
	out := tensorValue("y", 1, -1, 2)
	noShape := &onnxpb.ValueInfoProto{Name: "s", Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: 7}}}}
	// A sequence input (TypeProto.sequence_type, field 4), which the Go
	// schema here does not carry.
	seqType := protowire.AppendBytes(protowire.AppendTag(nil, 4, protowire.BytesType), nil)
	seq := protowire.AppendBytes(protowire.AppendTag(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "q"), 2, protowire.BytesType), seqType)

	cases := []struct {
		name      string
		file      []byte
		ins, outs []Value
		err       string
	}{
		{name: "a batch dimension, a weight listed as input, FP16",
			file: marshal(t, model([]*onnxpb.ValueInfoProto{tensorValue("x", 10, -1, 3, 4), tensorValue("w", 1, 2)}, out)),
			ins:  []Value{{Name: "x", DataType: tensor.FP16, Shape: []int64{-1, 3, 4}}},
			outs: []Value{{Name: "y", DataType: tensor.FP32, Shape: []int64{-1, 2}}}},
		{name: "a scalar and a value without shape",
			file: marshal(t, model([]*onnxpb.ValueInfoProto{tensorValue("k", 9), noShape}, out)),
			ins:  []Value{{Name: "k", DataType: tensor.Bool, Shape: []int64{}}, {Name: "s", DataType: tensor.Int64, Shape: []int64{}}},
			outs: []Value{{Name: "y", DataType: tensor.FP32, Shape: []int64{-1, 2}}}},
		{name: "a complex input", file: marshal(t, model([]*onnxpb.ValueInfoProto{tensorValue("c", 14, 2)}, out)),
			err: `input "c": unsupported input or output type: ONNX element type 14`},
		{name: "a sequence input", file: withGraphField(t, model(nil, out), 11, seq),
			err: `input "q": unsupported input or output type: a sequence, not a tensor; a scikit-learn classifier's probabilities come as one (ZipMap) unless it is converted with skl2onnx's option {'zipmap': False}, which gives them as a tensor`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "model.onnx")
			require.NoError(t, os.WriteFile(path, tc.file, 0o644))
			ins, outs, err := ReadInterface(path)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrUnsupportedType)
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.ins, ins)
			require.Equal(t, tc.outs, outs)
		})
	}
}
