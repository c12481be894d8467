package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// value describes a graph input or output: an element type and dims, each
// an int (fixed) or a string (symbolic, e.g. "N").
type value struct {
	name string
	elem onnxpb.TensorProto_DataType
	dims []any
}

func (v value) info() *onnxpb.ValueInfoProto {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range v.dims {
		switch d := d.(type) {
		case int:
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
		case string:
			shape.Dim = append(shape.Dim, &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: d}})
		default:
			panic("dims are int or string")
		}
	}
	return &onnxpb.ValueInfoProto{Name: v.name, Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{
		TensorType: &onnxpb.TypeProto_Tensor{ElemType: int32(v.elem), Shape: shape},
	}}}
}

// op builds a node with one output.
func op(opType string, inputs []string, output string, attrs ...*onnxpb.AttributeProto) *onnxpb.NodeProto {
	return &onnxpb.NodeProto{Name: output, OpType: opType, Input: inputs, Output: []string{output}, Attribute: attrs}
}

// castTo is Cast's "to" attribute.
func castTo(elem onnxpb.TensorProto_DataType) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: "to", Type: onnxpb.AttributeProto_INT, I: int64(elem)}
}

// writeGraph writes a one-graph ONNX model (opset 17) and returns its path.
func writeGraph(t *testing.T, name string, inputs, outputs []value, nodes ...*onnxpb.NodeProto) string {
	t.Helper()
	g := &onnxpb.GraphProto{Name: name, Node: nodes}
	for _, v := range inputs {
		g.Input = append(g.Input, v.info())
	}
	for _, v := range outputs {
		g.Output = append(g.Output, v.info())
	}
	m := &onnxpb.ModelProto{IrVersion: 8, OpsetImport: []*onnxpb.OperatorSetIdProto{{Version: 17}}, Graph: g}
	b, err := proto.Marshal(m)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), name+".onnx")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}
