package kserve

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// classes reads Classify's answer back as strings.
func classes(t *testing.T, c tensor.Tensor) []string {
	t.Helper()
	require.Equal(t, tensor.Bytes, c.DataType)
	elems, err := tensor.BytesElements(c.Data)
	require.NoError(t, err)
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = string(e)
	}
	return out
}

func TestClassify(t *testing.T) {
	le := binary.LittleEndian
	f32, err := tensor.FromFloat32s("p", []int64{2, 4}, []float32{1, 5, 10, 4, 0.5, float32(math.NaN()), -2, 0.5})
	require.NoError(t, err)
	var i64 []byte
	for _, v := range []int64{-7, 3, math.MaxInt64, 3} {
		i64 = le.AppendUint64(i64, uint64(v))
	}
	ints, err := tensor.New("n", tensor.Int64, []int64{4}, i64)
	require.NoError(t, err)
	var u16 []byte
	for _, v := range []uint16{0x3c00, 0xc000, 0x4200} { // FP16 1, -2, 3
		u16 = le.AppendUint16(u16, v)
	}
	half, err := tensor.New("h", tensor.FP16, []int64{1, 3}, u16)
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		in      tensor.Tensor
		k       int
		batched bool
		labels  []string
		shape   []int64
		want    []string
	}{
		{name: "top two of each row", in: f32, k: 2, batched: true, shape: []int64{2, 2},
			want: []string{"10.000000:2", "5.000000:1", "0.500000:0", "0.500000:3"}},
		{name: "labels where the file has them", in: f32, k: 3, batched: true, labels: []string{"a", "b", "c"}, shape: []int64{2, 3},
			want: []string{"10.000000:2:c", "5.000000:1:b", "4.000000:3", "0.500000:0:a", "0.500000:3", "-2.000000:2:c"}},
		{name: "more than the row has", in: f32, k: 9, batched: true, shape: []int64{2, 4},
			want: []string{"10.000000:2", "5.000000:1", "4.000000:3", "1.000000:0", "0.500000:0", "0.500000:3", "-2.000000:2", "NaN:1"}},
		{name: "not batched: one row of every element", in: f32, k: 2, shape: []int64{2}, want: []string{"10.000000:2", "5.000000:1"}},
		{name: "integers exact", in: ints, k: 3, shape: []int64{3}, want: []string{"9223372036854775807:2", "3:1", "3:3"}},
		{name: "fp16", in: half, k: 3, batched: true, shape: []int64{1, 3}, want: []string{"3.000000:2", "1.000000:0", "-2.000000:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Classify(tc.in, tc.k, tc.batched, tc.labels)
			require.NoError(t, err)
			require.Equal(t, tc.in.Name, c.Name)
			require.Equal(t, tc.shape, c.Shape)
			require.Equal(t, tc.want, classes(t, c))
		})
	}

	words, err := tensor.New("w", tensor.Bytes, []int64{1}, tensor.AppendBytesElement(nil, []byte("x")))
	require.NoError(t, err)
	_, err = Classify(words, 1, false, nil)
	require.ErrorIs(t, err, ErrNotClassifiable)
	_, err = Classify(f32, 0, true, nil)
	require.ErrorIs(t, err, ErrBadRequest)
}
