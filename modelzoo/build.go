package modelzoo

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

const (
	// ProducerName is the producer_name of every zoo file.
	ProducerName = "gpuletd-modelzoo"
	// ProducerVersion is the producer_version of every zoo file; it changes
	// when a builder changes the graphs it writes.
	ProducerVersion = "1"
	// Opset is the version of the standard ONNX operator set the graphs use.
	Opset = 17
	// IRVersion is the ONNX IR version of the files: 8 is the IR version
	// released together with opset 17 (ONNX 1.12).
	IRVersion = 8
	// BatchDim is the dim_param naming the dynamic batch dimension.
	BatchDim = "N"
)

// Build returns the named model as an ONNX graph whose weights are drawn
// from seed. Equal names and seeds give equal graphs.
func Build(name string, seed uint64) (*onnxpb.ModelProto, error) {
	if f, ok := lookupForm(name); ok {
		return f.model(seed), nil
	}
	m, err := Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("build model: %w", err)
	}
	g := newGraph(newWeights(m.Name, seed))
	out := m.build(g, m.InputName)
	last := g.nodes[len(g.nodes)-1]
	if len(last.Output) != 1 || last.Output[0] != out {
		return nil, fmt.Errorf("build model %s: last node %s does not produce %s", name, last.Name, out)
	}
	last.Output[0] = m.OutputName
	return modelProto(m.Name, m.Description, seed, &onnxpb.GraphProto{
		Name:        m.Name,
		Node:        g.nodes,
		Initializer: g.inits,
		Input:       []*onnxpb.ValueInfoProto{tensorInfo(m.InputName, m.InputShape)},
		Output:      []*onnxpb.ValueInfoProto{tensorInfo(m.OutputName, m.OutputShape)},
	}), nil
}

// modelProto wraps a zoo graph in the model every zoo file is: opset,
// producer and the name and seed in its metadata.
func modelProto(name, description string, seed uint64, g *onnxpb.GraphProto) *onnxpb.ModelProto {
	return &onnxpb.ModelProto{
		IrVersion:       IRVersion,
		OpsetImport:     []*onnxpb.OperatorSetIdProto{{Domain: "", Version: Opset}},
		ProducerName:    ProducerName,
		ProducerVersion: ProducerVersion,
		ModelVersion:    1,
		DocString: fmt.Sprintf("%s. Weights are random (modelzoo seed %d), not pretrained: outputs carry no meaning.",
			description, seed),
		MetadataProps: []*onnxpb.StringStringEntryProto{
			{Key: "modelzoo.model", Value: name},
			{Key: "modelzoo.seed", Value: strconv.FormatUint(seed, 10)},
		},
		Graph: g,
	}
}

// Marshal serializes a model deterministically: the same message always
// gives the same bytes.
func Marshal(m *onnxpb.ModelProto) ([]byte, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("marshal model: %w", err)
	}
	return b, nil
}

// BuildBytes returns the named model as the bytes of an .onnx file.
func BuildBytes(name string, seed uint64) ([]byte, error) {
	m, err := Build(name, seed)
	if err != nil {
		return nil, err
	}
	return Marshal(m)
}

// tensorInfo describes an FP32 graph input or output; a negative dimension
// becomes the symbolic batch dimension.
func tensorInfo(name string, shape []int64) *onnxpb.ValueInfoProto {
	return valueInfo(name, onnxpb.TensorProto_FLOAT, shape, BatchDim)
}

// valueInfo describes a graph input or output of element type elem; a
// negative dimension becomes a symbolic dimension named by sym: the k-th
// negative one the k-th of sym's comma-separated names ("N,T"), or the
// last name when sym has fewer.
func valueInfo(name string, elem onnxpb.TensorProto_DataType, shape []int64, sym string) *onnxpb.ValueInfoProto {
	syms := strings.Split(sym, ",")
	dims := make([]*onnxpb.TensorShapeProto_Dimension, len(shape))
	k := 0
	for i, d := range shape {
		if d < 0 {
			dims[i] = &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: syms[min(k, len(syms)-1)]}}
			k++
		} else {
			dims[i] = &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}}
		}
	}
	return &onnxpb.ValueInfoProto{
		Name: name,
		Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
			ElemType: int32(elem),
			Shape:    &onnxpb.TensorShapeProto{Dim: dims},
		}}},
	}
}
