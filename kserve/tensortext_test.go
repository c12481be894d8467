package kserve

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
)

func TestTensorText(t *testing.T) {
	le32 := func(vals ...float32) []byte {
		b := make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return b
	}
	var words []byte
	for _, w := range []string{"cat", "d\xffg"} {
		words = tensor.AppendBytesElement(words, []byte(w))
	}
	tests := []struct {
		name string
		t    tensor.Tensor
		want string
	}{
		{"FP32, shortest digits, NaN and Inf as such", tensor.Tensor{DataType: tensor.FP32, Shape: []int64{1, 4},
			Data: le32(0.1, -2, float32(math.NaN()), float32(math.Inf(1)))}, "0.1,-2,NaN,+Inf"},
		{"INT8 sign-extended", tensor.Tensor{DataType: tensor.Int8, Shape: []int64{3}, Data: []byte{1, 0xff, 0x80}}, "1,-1,-128"},
		{"UINT16", tensor.Tensor{DataType: tensor.Uint16, Shape: []int64{2}, Data: []byte{0xff, 0xff, 2, 0}}, "65535,2"},
		{"BOOL as 0 and 1", tensor.Tensor{DataType: tensor.Bool, Shape: []int64{3}, Data: []byte{1, 0, 1}}, "1,0,1"},
		{"BYTES as text", tensor.Tensor{DataType: tensor.Bytes, Shape: []int64{2}, Data: words}, "cat,d\uFFFDg"},
		{"empty", tensor.Tensor{DataType: tensor.FP32, Shape: []int64{0}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TensorText(tt.t)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
	require.Equal(t, "1,16", ShapeText([]int64{1, 16}))
	require.Equal(t, "", ShapeText(nil))
}
