package tensor

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewChecksLength(t *testing.T) {
	tests := []struct {
		name  string
		dt    DataType
		shape []int64
		n     int
		err   error
	}{
		{"fp32 ok", FP32, []int64{2, 3}, 24, nil},
		{"fp16 ok", FP16, []int64{2, 3}, 12, nil},
		{"int64 ok", Int64, []int64{1, 4}, 32, nil},
		{"int32 ok", Int32, []int64{4}, 16, nil},
		{"uint8 ok", Uint8, []int64{1, 3, 2, 2}, 12, nil},
		{"bool ok", Bool, []int64{5}, 5, nil},
		{"scalar ok", FP32, nil, 4, nil},
		{"empty ok", FP32, []int64{0, 3}, 0, nil},
		{"short", FP32, []int64{2, 3}, 20, ErrInvalid},
		{"long", FP32, []int64{2, 3}, 28, ErrInvalid},
		{"negative dim", FP32, []int64{-1, 3}, 0, ErrInvalid},
		{"overflow", FP32, []int64{1 << 40, 1 << 40}, 0, ErrInvalid},
		{"over max", Uint8, []int64{1 << 16, 1 << 16}, 0, ErrInvalid},
		{"bf16 ok", BF16, []int64{3}, 6, nil},
		{"bytes empty elements ok", Bytes, []int64{2}, 8, nil},
		{"bytes cut in a length", Bytes, []int64{1}, 3, ErrInvalid},
		{"bytes too few elements", Bytes, []int64{3}, 8, ErrInvalid},
		{"unknown type", DataType("FLOAT"), []int64{1}, 4, ErrInvalidDataType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New("x", tc.dt, tc.shape, make([]byte, tc.n))
			if tc.err == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.err)
			require.Contains(t, err.Error(), `"x"`, "errors name the tensor")
		})
	}
}

func TestConcatSplitRoundTrip(t *testing.T) {
	a, err := FromFloat32s("in", []int64{1, 2}, []float32{1, 2})
	require.NoError(t, err)
	b, err := FromFloat32s("in", []int64{2, 2}, []float32{3, 4, 5, 6})
	require.NoError(t, err)
	c, err := Concat("in", []Tensor{a, b})
	require.NoError(t, err)
	require.Equal(t, []int64{3, 2}, c.Shape)
	vals, err := c.Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3, 4, 5, 6}, vals)

	parts, err := Split(c, []int64{1, 2})
	require.NoError(t, err)
	require.Equal(t, a.Shape, parts[0].Shape)
	require.True(t, bytes.Equal(a.Data, parts[0].Data))
	require.Equal(t, b.Shape, parts[1].Shape)
	require.True(t, bytes.Equal(b.Data, parts[1].Data))
	// Parts do not write into each other.
	parts[0].Data = append(parts[0].Data, 0)
	require.True(t, bytes.Equal(b.Data, parts[1].Data))
}

func TestConcatRejectsMismatches(t *testing.T) {
	f, _ := Zeros("in", FP32, []int64{1, 2})
	g, _ := Zeros("in", FP32, []int64{1, 3})
	i, _ := Zeros("in", Int64, []int64{1, 2})
	s, _ := Zeros("in", FP32, nil)
	for name, parts := range map[string][]Tensor{
		"empty": nil, "trailing dims": {f, g}, "dtype": {f, i}, "scalar": {s, s},
	} {
		_, err := Concat("in", parts)
		require.ErrorIs(t, err, ErrInvalid, name)
	}
}

func TestSplitRejectsBadRows(t *testing.T) {
	z, _ := Zeros("out", FP32, []int64{3, 2})
	_, err := Split(z, []int64{1, 1})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = Split(z, []int64{4, -1})
	require.ErrorIs(t, err, ErrInvalid)
}

func TestMatchShape(t *testing.T) {
	require.True(t, MatchShape([]int64{1, 28, 28}, []int64{1, 28, 28}))
	require.True(t, MatchShape([]int64{1, 5}, []int64{1, -1}))
	require.False(t, MatchShape([]int64{1, 28}, []int64{1, 28, 28}))
	require.False(t, MatchShape([]int64{2, 28, 28}, []int64{1, 28, 28}))
}

func FuzzNew(f *testing.F) {
	f.Add("FP32", int64(2), int64(3), []byte("0123456789abcdefghijklmn"))
	f.Add("BOOL", int64(-1), int64(3), []byte{1})
	f.Add("INT64", int64(1<<40), int64(1<<30), []byte{})
	f.Add("BYTES", int64(1), int64(1), []byte{0, 0, 0, 1, 'a'})
	f.Add("BYTES", int64(1), int64(2), []byte{1, 0, 0, 0, 'a', 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, dt string, d0, d1 int64, data []byte) {
		tt, err := New("x", DataType(dt), []int64{d0, d1}, data)
		if err != nil {
			return
		}
		n, err := NumElements(tt.Shape)
		require.NoError(t, err)
		if tt.DataType.Size() == 0 {
			// BYTES: length-prefixed elements, as many as the shape holds.
			elems, err := BytesElements(tt.Data)
			require.NoError(t, err)
			require.Equal(t, n, int64(len(elems)))
		} else {
			require.Equal(t, n*int64(tt.DataType.Size()), int64(len(tt.Data)))
		}
		if d0 > 0 {
			parts, err := Split(tt, []int64{d0})
			require.NoError(t, err)
			back, err := Concat("x", parts)
			require.NoError(t, err)
			require.Equal(t, tt.Data, back.Data)
		}
	})
}
