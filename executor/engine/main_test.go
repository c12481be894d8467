package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/modelzoo"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// initORT loads the development copy of ONNX Runtime (make deps).
func initORT(tb testing.TB) {
	tb.Helper()
	path, err := onnxrt.FindLibrary("")
	if err != nil {
		tb.Fatalf("%v (tests need the library: make deps)", err)
	}
	require.NoError(tb, onnxrt.Init(path))
}

// zooModel writes the named zoo model (seed 1) to a temporary file.
func zooModel(tb testing.TB, name string) string {
	tb.Helper()
	b, err := modelzoo.BuildBytes(name, 1)
	require.NoError(tb, err)
	path := filepath.Join(tb.TempDir(), name+".onnx")
	require.NoError(tb, os.WriteFile(path, b, 0o644))
	return path
}

// newCPU returns a CPU onnxruntime engine with the given threads, closed
// when the test ends.
func newCPU(tb testing.TB, threads int) *ORT {
	tb.Helper()
	initORT(tb)
	e, err := NewORT(ORTOptions{IntraOpThreads: threads})
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, e.Close()) })
	return e
}
