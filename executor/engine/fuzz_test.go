package engine

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// FuzzValidate feeds arbitrary request tensors to a batched layout with an
// FP32 [3, -1] input and a BOOL [-1] input. Validation must never panic,
// and what it accepts must be well-formed, within the batch limit, and
// joinable.
func FuzzValidate(f *testing.F) {
	f.Add("x", "FP32", []byte{2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 24), []byte{2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0}, []byte{0, 1, 1, 0, 1, 1, 0, 0})
	f.Add("x", "FP32", []byte{1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 20), []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, []byte{0, 2})
	f.Add("mask", "BOOL", []byte{255, 255, 255, 255, 255, 255, 255, 127}, []byte{}, []byte{}, []byte{})
	f.Add("x", "FP16", []byte{9, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 54), []byte{9, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 9))
	l, err := newLayout("fuzz", 8,
		[]TensorSpec{{Name: "x", DataType: tensor.FP32, Shape: []int64{3, -1}}, {Name: "mask", DataType: tensor.Bool, Shape: []int64{-1}}},
		[]TensorSpec{{Name: "y", DataType: tensor.FP32, Shape: []int64{1}}})
	require.NoError(f, err)
	dims := func(b []byte) []int64 {
		var out []int64
		for len(b) >= 8 && len(out) < 6 {
			out = append(out, int64(binary.LittleEndian.Uint64(b)))
			b = b[8:]
		}
		return out
	}
	f.Fuzz(func(t *testing.T, name, dtype string, shapeA, dataA, shapeB, dataB []byte) {
		req := []tensor.Tensor{
			{Name: name, DataType: tensor.DataType(dtype), Shape: dims(shapeA), Data: dataA},
			{Name: "mask", DataType: tensor.Bool, Shape: dims(shapeB), Data: dataB},
		}
		ordered, rows, err := l.validate(req)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidInput)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, -1, ie.Request)
			return
		}
		require.GreaterOrEqual(t, rows, int64(1))
		require.LessOrEqual(t, rows, int64(8))
		for i, tt := range ordered {
			require.NoError(t, tt.Check())
			require.Equal(t, l.inputs[i].Name, tt.Name)
			require.Equal(t, rows, tt.Shape[0])
		}
		joined, release := join("x", []tensor.Tensor{ordered[0], ordered[0]})
		defer release()
		require.NoError(t, joined.Check())
		require.Equal(t, 2*rows, joined.Shape[0])
	})
}
