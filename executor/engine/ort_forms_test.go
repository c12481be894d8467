package engine

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// strs encodes BYTES elements.
func strs(elems ...string) []byte {
	var out []byte
	for _, e := range elems {
		out = tensor.AppendBytesElement(out, []byte(e))
	}
	return out
}

// bf16 encodes float32 values that BF16 holds exactly (their low 16 bits
// are zero).
func bf16(fs ...float32) []byte {
	var out []byte
	for _, f := range fs {
		out = binary.LittleEndian.AppendUint16(out, uint16(math.Float32bits(f)>>16))
	}
	return out
}

// TestORTScalarsBF16AndStrings runs a model that does not batch with rank-0
// inputs and outputs, a dynamic dimension that is not first, BF16 and
// strings.
func TestORTScalarsBF16AndStrings(t *testing.T) {
	const (
		i64 = onnxpb.TensorProto_INT64
		f32 = onnxpb.TensorProto_FLOAT
		b16 = onnxpb.TensorProto_BFLOAT16
		str = onnxpb.TensorProto_STRING
	)
	upper := &onnxpb.AttributeProto{Name: "case_change_action", Type: onnxpb.AttributeProto_STRING, S: []byte("UPPER")}
	// The C locale is on every host; its case mapping is ASCII only.
	locale := &onnxpb.AttributeProto{Name: "locale", Type: onnxpb.AttributeProto_STRING, S: []byte("C")}
	path := writeGraph(t, "forms",
		[]value{{"sr", i64, nil}, {"x", f32, []any{1, "T"}}, {"s", str, []any{"L"}}, {"b", b16, []any{2, "K"}}},
		[]value{{"sr2", i64, nil}, {"n", i64, nil}, {"up", str, []any{"L"}}, {"b2", b16, []any{2, "K"}}, {"bf", f32, []any{2, "K"}}, {"x2", f32, []any{1, "T"}}},
		op("Add", []string{"sr", "sr"}, "sr2"),
		op("Size", []string{"s"}, "n"),
		op("StringNormalizer", []string{"s"}, "up", upper, locale),
		op("Identity", []string{"b"}, "b2"),
		op("Cast", []string{"b"}, "bf", castTo(f32)),
		op("Neg", []string{"x"}, "x2"),
	)
	m, err := newCPU(t, 1).Load(context.Background(), ModelSpec{Name: "forms", Path: path})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	require.Equal(t, []TensorSpec{
		{Name: "sr", DataType: tensor.Int64, Shape: []int64{}},
		{Name: "x", DataType: tensor.FP32, Shape: []int64{1, -1}},
		{Name: "s", DataType: tensor.Bytes, Shape: []int64{-1}},
		{Name: "b", DataType: tensor.BF16, Shape: []int64{2, -1}},
	}, m.Inputs())

	x, err := tensor.FromFloat32s("x", []int64{1, 3}, []float32{1, -2, 3.5})
	require.NoError(t, err)
	req := []tensor.Tensor{
		mustTensor(t, "sr", tensor.Int64, []int64{}, le(int64(16000))),
		x,
		mustTensor(t, "s", tensor.Bytes, []int64{3}, strs("hello", "", "Grüße")),
		mustTensor(t, "b", tensor.BF16, []int64{2, 2}, bf16(1, -2.5, 0.15625, 1024)),
	}
	outs, _, err := m.Run(context.Background(), [][]tensor.Tensor{req, req}, nil)
	require.NoError(t, err)
	for _, out := range outs {
		require.Equal(t, mustTensor(t, "sr2", tensor.Int64, []int64{}, le(int64(32000))), out[0])
		require.Equal(t, mustTensor(t, "n", tensor.Int64, []int64{}, le(int64(3))), out[1])
		require.Equal(t, "up", out[2].Name)
		require.Equal(t, []int64{3}, out[2].Shape)
		elems, err := tensor.BytesElements(out[2].Data)
		require.NoError(t, err)
		require.Equal(t, [][]byte{[]byte("HELLO"), {}, []byte("GRüßE")}, elems)
		require.Equal(t, req[3].Data, out[3].Data)
		bf, err := out[4].Float32s()
		require.NoError(t, err)
		require.Equal(t, []float32{1, -2.5, 0.15625, 1024}, bf)
		x2, err := out[5].Float32s()
		require.NoError(t, err)
		require.Equal(t, []float32{-1, 2, -3.5}, x2)
	}

	t.Run("a string with a zero byte is refused naming the tensor", func(t *testing.T) {
		bad := append([]tensor.Tensor(nil), req...)
		bad[2] = mustTensor(t, "s", tensor.Bytes, []int64{1}, strs("a\x00b"))
		require.ErrorIs(t, m.Validate(bad), ErrInvalidInput, "refused before it is queued")
		_, _, err := m.Run(context.Background(), [][]tensor.Tensor{bad}, nil)
		require.ErrorIs(t, err, ErrInvalidInput)
		var in *InputError
		require.ErrorAs(t, err, &in)
		require.Equal(t, "s", in.Tensor)
		require.ErrorContains(t, err, "zero byte")
	})
	t.Run("a scalar given a dimension is refused", func(t *testing.T) {
		bad := append([]tensor.Tensor(nil), req...)
		bad[0] = mustTensor(t, "sr", tensor.Int64, []int64{1}, le(int64(16000)))
		err := m.Validate(bad)
		require.ErrorIs(t, err, ErrInvalidInput)
		require.ErrorContains(t, err, "shape [1] does not match []")
	})
}

// TestORTBatchedStrings joins string rows of different lengths into one run
// and splits them back.
func TestORTBatchedStrings(t *testing.T) {
	const str = onnxpb.TensorProto_STRING
	path := writeGraph(t, "words", []value{{"w", str, []any{"N", 2}}}, []value{{"w2", str, []any{"N", 2}}},
		op("Identity", []string{"w"}, "w2"))
	m, err := newCPU(t, 1).Load(context.Background(), ModelSpec{Name: "words", Path: path, MaxBatchSize: 4})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	reqs := [][]tensor.Tensor{
		{mustTensor(t, "w", tensor.Bytes, []int64{1, 2}, strs("a", "bbbbbbbb"))},
		{mustTensor(t, "w", tensor.Bytes, []int64{2, 2}, strs("", "c", "dd", "e"))},
	}
	outs, info, err := m.Run(context.Background(), reqs, nil)
	require.NoError(t, err)
	require.Equal(t, 1, info.Runs)
	for i := range reqs {
		require.Equal(t, reqs[i][0].Shape, outs[i][0].Shape)
		require.Equal(t, reqs[i][0].Data, outs[i][0].Data)
	}
}
