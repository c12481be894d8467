package onnxfile

import (
	"bytes"
	"io"
	"testing"

	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	require.NoError(t, err)
	return b
}

func TestReadExternalRefs(t *testing.T) {
	inline, err := modelzoo.Build("lenet5", 1)
	require.NoError(t, err)
	split, err := modelzoo.Build("lenet5", 1)
	require.NoError(t, err)
	data := modelzoo.SplitExternalData(split, "w.bin")
	var moved []ExternalRef
	for _, init := range split.Graph.Initializer {
		if init.DataLocation == onnxpb.TensorProto_EXTERNAL {
			moved = append(moved, ExternalRef{Tensor: init.Name, Location: "w.bin"})
		}
	}
	require.NotEmpty(t, moved)
	require.Less(t, len(moved), len(split.Graph.Initializer), "small tensors stay inline")

	// A tensor in an If node's branch, one in a Constant node's value and
	// a sparse initializer's values (field 15, which the Go schema here
	// does not carry): each kept outside.
	branch := &onnxpb.GraphProto{Name: "then", Initializer: []*onnxpb.TensorProto{modelzoo.ExternalTensor("deep", "deep.bin", 0, 8)}}
	nested := &onnxpb.ModelProto{IrVersion: 8, Graph: &onnxpb.GraphProto{Name: "g", Node: []*onnxpb.NodeProto{
		{OpType: "If", Attribute: []*onnxpb.AttributeProto{{Name: "then_branch", G: branch}}},
		{OpType: "Constant", Attribute: []*onnxpb.AttributeProto{{Name: "value", T: modelzoo.ExternalTensor("const", "c.bin", 4, 4)}}},
	}}}
	nestedBytes := marshal(t, nested)
	values := marshal(t, modelzoo.ExternalTensor("sparse", "s.bin", 16, 16))
	var sparse []byte
	sparse = protowire.AppendTag(sparse, 1, protowire.BytesType)
	sparse = protowire.AppendBytes(sparse, values)
	graph := marshal(t, nested.Graph)
	graph = protowire.AppendTag(graph, 15, protowire.BytesType)
	graph = protowire.AppendBytes(graph, sparse)
	withSparse := protowire.AppendTag(nil, 7, protowire.BytesType)
	withSparse = protowire.AppendBytes(withSparse, graph)

	cases := []struct {
		name string
		file []byte
		want []string // tensor@location
		ends map[string]int64
	}{
		{"inline", marshal(t, inline), nil, nil},
		{"split", marshal(t, split), refNames(moved), map[string]int64{moved[len(moved)-1].Tensor: int64(len(data))}},
		{"nested graphs and node values", nestedBytes, []string{"deep@deep.bin", "const@c.bin"}, map[string]int64{"deep": 8, "const": 8}},
		{"a sparse initializer", withSparse, []string{"deep@deep.bin", "const@c.bin", "sparse@s.bin"}, map[string]int64{"sparse": 32}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			refs, err := readRefs(bytes.NewReader(tc.file))
			require.NoError(t, err)
			var got []string
			for _, r := range refs {
				got = append(got, r.Tensor+"@"+r.Location)
				if end, ok := tc.ends[r.Tensor]; ok {
					require.Equal(t, end, r.End, r.Tensor)
				}
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func refNames(refs []ExternalRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Tensor+"@"+r.Location)
	}
	return out
}

// Files that are not ONNX models fail cleanly: no panic, no endless
// recursion, no allocation a length prefix asks for.
func TestReadExternalRefsRefusesMalformedFiles(t *testing.T) {
	m, err := modelzoo.Build("lenet5", 1)
	require.NoError(t, err)
	good := marshal(t, m)

	// GraphProto.node → NodeProto.attribute → AttributeProto.g → …, past
	// the depth a model has.
	deep := marshal(t, &onnxpb.GraphProto{Name: "innermost"})
	for range maxPBDepth/3 + 1 {
		attr := protowire.AppendBytes(protowire.AppendTag(nil, 6, protowire.BytesType), deep)
		node := protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), attr)
		deep = protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), node)
	}
	deep = protowire.AppendBytes(protowire.AppendTag(nil, 7, protowire.BytesType), deep)

	huge := protowire.AppendTag(nil, 7, protowire.BytesType)
	huge = protowire.AppendVarint(huge, 1<<40)

	cases := []struct {
		name string
		file []byte
	}{
		{"text", []byte("onnx")},
		{"cut short", good[:len(good)/2]},
		{"a length past the end", huge},
		{"a group", protowire.AppendTag(nil, 3, protowire.StartGroupType)},
		{"nested past any model", deep},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readRefs(bytes.NewReader(tc.file))
			require.ErrorIs(t, err, ErrNotONNX)
		})
	}
}

// readRefs is Scan's external data.
func readRefs(r io.Reader) ([]ExternalRef, error) {
	f, err := Scan(r)
	if err != nil {
		return nil, err
	}
	return f.ExternalData, nil
}
