package onnxfile

import (
	"bytes"
	"io"
	"testing"

	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/stretchr/testify/require"
)

// FuzzScanONNX feeds arbitrary model files to the reader that finds their
// external data, inputs and outputs: it must never panic or run away, and
// it finds the same in a file it seeks through as in a stream it reads.
func FuzzScanONNX(f *testing.F) {
	for _, seed := range []uint64{1, 2} {
		m, err := modelzoo.Build("lenet5", seed)
		if err != nil {
			f.Fatal(err)
		}
		if seed == 2 {
			modelzoo.SplitExternalData(m, "model.onnx.data")
		}
		b, err := modelzoo.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("onnx"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sought, err := Scan(bytes.NewReader(data))
		read, err2 := Scan(struct{ io.Reader }{bytes.NewReader(data)})
		require.Equal(t, err == nil, err2 == nil, "%v / %v", err, err2)
		if err != nil {
			require.ErrorIs(t, err, ErrNotONNX)
			return
		}
		require.Equal(t, read, sought)
		_, _, _ = sought.Interface()
	})
}
