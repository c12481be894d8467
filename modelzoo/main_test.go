package modelzoo_test

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

// initORT loads the development copy of ONNX Runtime (.deps/onnxruntime,
// found by walking up from the package directory).
func initORT(tb testing.TB) {
	tb.Helper()
	path, err := onnxrt.FindLibrary("")
	if err != nil {
		tb.Fatalf("%v (tests need the library: make deps)", err)
	}
	require.NoError(tb, onnxrt.Init(path))
}

// writeModel writes the named model built from seed to a temporary .onnx
// file and returns its path.
func writeModel(tb testing.TB, name string, seed uint64) string {
	tb.Helper()
	b, err := modelzoo.BuildBytes(name, seed)
	require.NoError(tb, err)
	path := filepath.Join(tb.TempDir(), name+".onnx")
	require.NoError(tb, os.WriteFile(path, b, 0o644))
	return path
}
