package modelzoo_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

func TestBuildIsDeterministic(t *testing.T) {
	for _, name := range modelzoo.Names() {
		t.Run(name, func(t *testing.T) {
			a, err := modelzoo.BuildBytes(name, 42)
			require.NoError(t, err)
			b, err := modelzoo.BuildBytes(name, 42)
			require.NoError(t, err)
			require.True(t, bytes.Equal(a, b), "same seed, different bytes")
			c, err := modelzoo.BuildBytes(name, 43)
			require.NoError(t, err)
			require.Len(t, c, len(a), "the seed changes weights, not structure")
			require.False(t, bytes.Equal(a, c), "different seed, same bytes")
		})
	}
}

// TestModelsDifferAtEqualSeed checks that two models with the same layer
// shapes do not share weights just because they share a seed.
func TestModelsDifferAtEqualSeed(t *testing.T) {
	a, err := modelzoo.Build("lenet5", 1)
	require.NoError(t, err)
	b, err := modelzoo.Build("mlp", 1)
	require.NoError(t, err)
	require.NotEqual(t, a.Graph.Initializer[0].RawData[:64], b.Graph.Initializer[0].RawData[:64])
}

// TestGraphStructure decodes each serialized model and checks what
// onnxruntime relies on: header fields, the dynamic batch dimension, nodes
// in topological order, well-formed finite FP32 initializers, and the
// expected layer and parameter counts.
func TestGraphStructure(t *testing.T) {
	tests := []struct {
		name   string
		ops    map[string]int
		params int // weights excluding BatchNormalization running statistics
	}{
		// LeNet-5: 156 + 2416 + 48120 + 10164 + 850.
		{name: "lenet5", ops: map[string]int{"Conv": 2, "Relu": 4, "MaxPool": 2, "Flatten": 1, "Gemm": 3}, params: 61706},
		// 784·512+512 + 512·256+256 + 256·10+10.
		{name: "mlp", ops: map[string]int{"Gemm": 3, "Relu": 2}, params: 535818},
		// ResNet-18's well-known parameter count (torchvision resnet18).
		{name: "resnet18", ops: map[string]int{"Conv": 20, "BatchNormalization": 20, "Relu": 17, "MaxPool": 1, "Add": 8, "GlobalAveragePool": 1, "Flatten": 1, "Gemm": 1}, params: 11689512},
		// 13 convs (3,680,160 weights+biases) + 12544·256+256 + 256·256+256 + 256·1000+1000.
		{name: "vgg", ops: map[string]int{"Conv": 13, "Relu": 15, "MaxPool": 5, "Flatten": 1, "Gemm": 3}, params: 7214472},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := modelzoo.Lookup(tt.name)
			require.NoError(t, err)
			raw, err := modelzoo.BuildBytes(tt.name, 7)
			require.NoError(t, err)
			var m onnxpb.ModelProto
			require.NoError(t, proto.Unmarshal(raw, &m))

			require.EqualValues(t, modelzoo.IRVersion, m.IrVersion)
			require.Len(t, m.OpsetImport, 1)
			require.Equal(t, "", m.OpsetImport[0].Domain)
			require.EqualValues(t, 17, m.OpsetImport[0].Version)
			require.Equal(t, "gpuletd-modelzoo", m.ProducerName)
			require.Contains(t, m.DocString, "random")
			require.Contains(t, m.DocString, "seed 7")

			g := m.Graph
			require.Len(t, g.Input, 1)
			require.Len(t, g.Output, 1)
			checkValueInfo(t, g.Input[0], spec.InputName, spec.InputShape)
			checkValueInfo(t, g.Output[0], spec.OutputName, spec.OutputShape)

			available := map[string]bool{spec.InputName: true}
			params := 0
			for _, init := range g.Initializer {
				require.False(t, available[init.Name], "duplicate value %s", init.Name)
				available[init.Name] = true
				require.EqualValues(t, onnxpb.TensorProto_FLOAT, init.DataType, init.Name)
				n := 1
				for _, d := range init.Dims {
					require.Positive(t, d, init.Name)
					n *= int(d)
				}
				require.Len(t, init.RawData, 4*n, init.Name)
				bad := 0
				for i := 0; i < len(init.RawData); i += 4 {
					v := float64(math.Float32frombits(binary.LittleEndian.Uint32(init.RawData[i:])))
					if math.IsNaN(v) || math.IsInf(v, 0) {
						bad++
					}
				}
				require.Zero(t, bad, "non-finite weights in %s", init.Name)
				if !strings.HasSuffix(init.Name, ".mean") && !strings.HasSuffix(init.Name, ".var") {
					params += n
				}
			}
			require.Equal(t, tt.params, params)

			ops := map[string]int{}
			nodeNames := map[string]bool{}
			for _, n := range g.Node {
				ops[n.OpType]++
				require.False(t, nodeNames[n.Name], "duplicate node %s", n.Name)
				nodeNames[n.Name] = true
				for _, in := range n.Input {
					require.True(t, available[in], "node %s reads %s before it is produced", n.Name, in)
				}
				for _, out := range n.Output {
					require.False(t, available[out], "value %s produced twice", out)
					available[out] = true
				}
				for _, a := range n.Attribute {
					require.NotEqual(t, onnxpb.AttributeProto_UNDEFINED, a.Type, "%s.%s", n.Name, a.Name)
				}
			}
			require.Equal(t, tt.ops, ops)
			require.Equal(t, spec.OutputName, g.Node[len(g.Node)-1].Output[0])
		})
	}
}

func checkValueInfo(t *testing.T, v *onnxpb.ValueInfoProto, name string, shape []int64) {
	t.Helper()
	require.Equal(t, name, v.Name)
	tt := v.Type.GetTensorType()
	require.NotNil(t, tt)
	require.EqualValues(t, onnxpb.TensorProto_FLOAT, tt.ElemType)
	dims := tt.Shape.Dim
	require.Len(t, dims, len(shape))
	require.Equal(t, modelzoo.BatchDim, dims[0].GetDimParam())
	for i := 1; i < len(shape); i++ {
		require.Equal(t, shape[i], dims[i].GetDimValue())
	}
}

func TestVGGFileSize(t *testing.T) {
	b, err := modelzoo.BuildBytes("vgg", 1)
	require.NoError(t, err)
	require.Less(t, len(b), 40<<20, "vgg must stay under 40 MB")
}
