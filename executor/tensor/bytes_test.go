package tensor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func bytesTensor(t *testing.T, shape []int64, elems ...string) Tensor {
	t.Helper()
	var data []byte
	for _, e := range elems {
		data = AppendBytesElement(data, []byte(e))
	}
	x, err := New("s", Bytes, shape, data)
	require.NoError(t, err)
	return x
}

func TestBytesElements(t *testing.T) {
	x := bytesTensor(t, []int64{2, 2}, "a", "", "hello", "\x00\xff")
	elems, err := BytesElements(x.Data)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("a"), {}, []byte("hello"), {0, 0xff}}, elems)

	_, err = BytesElements([]byte{5, 0, 0, 0, 'a'})
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "element 0 is 5 bytes long, only 1 follow")
}

// TestBytesConcatSplit joins BYTES tensors whose rows differ in length and
// splits them back.
func TestBytesConcatSplit(t *testing.T) {
	a := bytesTensor(t, []int64{1, 2}, "x", "yy")
	b := bytesTensor(t, []int64{2, 2}, "", "long element", "z", "")
	c, err := Concat("s", []Tensor{a, b})
	require.NoError(t, err)
	require.Equal(t, []int64{3, 2}, c.Shape)
	parts, err := Split(c, []int64{1, 2})
	require.NoError(t, err)
	require.Equal(t, a.Data, parts[0].Data)
	require.Equal(t, b.Data, parts[1].Data)
	require.Equal(t, []int64{2, 2}, parts[1].Shape)

	z, err := Zeros("s", Bytes, []int64{3})
	require.NoError(t, err)
	elems, err := BytesElements(z.Data)
	require.NoError(t, err)
	require.Len(t, elems, 3)
}
