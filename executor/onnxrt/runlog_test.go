package onnxrt

import (
	"context"
	"encoding/binary"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// stderrOf runs fn with the process's standard error (fd 2, where ONNX
// Runtime's own log goes) read into the returned text.
func stderrOf(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved, err := syscall.Dup(2)
	require.NoError(t, err)
	require.NoError(t, syscall.Dup2(int(w.Fd()), 2))
	read := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(r)
		read <- b
	}()
	fn()
	require.NoError(t, syscall.Dup2(saved, 2))
	require.NoError(t, syscall.Close(saved))
	require.NoError(t, w.Close())
	out := <-read
	require.NoError(t, r.Close())
	return string(out)
}

// A run the model refuses (a token id past its vocabulary, which the
// Gather refuses) returns its error and writes nothing to the log: the
// executor answers the request with it, and a line of ONNX Runtime's for
// each such request would let a client fill the log.
func TestAFailedRunWritesNoLogLine(t *testing.T) {
	initORT(t)
	path, _ := writeZooModel(t, "tokens")
	so, err := ort.NewSessionOptions()
	require.NoError(t, err)
	defer func() { _ = so.Destroy() }()
	s, err := NewSession(path, []string{"ids"}, []string{"embedded", "pooled"}, so)
	require.NoError(t, err)
	defer s.Close()
	var ids []byte
	for _, v := range []int64{1, 2, 99} {
		ids = binary.LittleEndian.AppendUint64(ids, uint64(v))
	}
	in, err := tensor.New("ids", tensor.Int64, []int64{1, 3}, ids)
	require.NoError(t, err)
	var runErr error
	logged := stderrOf(t, func() {
		runErr = s.Run(context.Background(), []tensor.Tensor{in}, make([]tensor.Tensor, 2))
	})
	require.ErrorIs(t, runErr, ErrInvalidArgument)
	require.Contains(t, runErr.Error(), "out of data bounds")
	require.Empty(t, logged)
}
