package kserve

import (
	"testing"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/stretchr/testify/require"
)

// FuzzDecodeRequest feeds arbitrary bodies and header lengths: decoding must
// never panic, allocate in proportion to the body, and whatever it accepts
// must be internally consistent.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"inputs":[{"name":"x","shape":[2,2],"datatype":"FP32","data":[[1,2],[3,4]]}]}`), int64(-1))
	f.Add([]byte(`{"id":"a","parameters":{"timeout":5},"inputs":[{"name":"b","shape":[2],"datatype":"BOOL","data":[true,false]}],"outputs":[{"name":"o","parameters":{"binary_data":true}}]}`), int64(-1))
	f.Add(append([]byte(`{"inputs":[{"name":"x","shape":[1],"datatype":"FP32","parameters":{"binary_data_size":4}}]}`), 0, 0, 128, 63), int64(84))
	f.Add([]byte(`{"inputs":[{"name":"x","shape":[1],"datatype":"INT8","data":[[[[[1]]]]]}]}`), int64(-1))
	f.Fuzz(func(t *testing.T, body []byte, jsonLen int64) {
		r := requireBoundedDecode(t, len(body), func() (*Request, error) { return DecodeRequest(body, jsonLen) })
		if r == nil {
			return
		}
		for _, in := range r.Inputs {
			n, err := tensor.NumElements(in.Shape)
			require.NoError(t, err)
			require.LessOrEqual(t, n*int64(in.DataType.Size()), int64(len(body)), "data never exceeds the body")
		}
	})
}

// FuzzDecodeData checks the data-array scanner alone.
func FuzzDecodeData(f *testing.F) {
	f.Add([]byte("[1,2,3]"), "FP32", int64(3))
	f.Add([]byte("[[true],[false]]"), "BOOL", int64(2))
	f.Add([]byte("[[[-1]]]"), "INT64", int64(1))
	f.Fuzz(func(t *testing.T, raw []byte, dt string, want int64) {
		d := tensor.DataType(dt)
		if !d.Valid() || want < 0 || want > 1<<20 {
			return
		}
		out, err := decodeData(raw, d, want)
		if err != nil {
			return
		}
		require.Equal(t, want*int64(d.Size()), int64(len(out)))
	})
}

// requireBoundedDecode runs decode, which was given size bytes: it must
// allocate in proportion to them, never to the shapes they declare (up to
// tensor.MaxElements values each: typed contents unpack to at most 8 bytes
// per value, a BOOL from one bit of a packed field at worst, BYTES elements
// gain a 4-byte length each), refuse only with ErrBadRequest, and give
// inputs that hold what their shapes say. It returns the request, nil when
// refused.
func requireBoundedDecode(t *testing.T, size int, decode func() (*Request, error)) *Request {
	t.Helper()
	var (
		r   *Request
		err error
	)
	got := allocatedBy(func() { r, err = decode() })
	require.Less(t, got, uint64(64*size+1<<20), "bytes allocated to decode %d bytes", size)
	if err != nil {
		require.ErrorIs(t, err, ErrBadRequest)
		return nil
	}
	require.NotEmpty(t, r.Inputs)
	for _, in := range r.Inputs {
		require.NoError(t, in.Check())
	}
	return r
}
