package onnxrt

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo"
)

// writeZooModel writes the named zoo model (seed 1) to a temporary file.
func writeZooModel(t *testing.T, name string) (string, []byte) {
	t.Helper()
	b, err := modelzoo.BuildBytes(name, 1)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), name+".onnx")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path, b
}

func TestReadModelInfoZoo(t *testing.T) {
	initORT(t)
	for _, name := range modelzoo.Names() {
		t.Run(name, func(t *testing.T) {
			m, err := modelzoo.Lookup(name)
			require.NoError(t, err)
			path, _ := writeZooModel(t, name)
			info, err := ReadModelInfo(path)
			require.NoError(t, err)
			require.Equal(t, []TensorInfo{{Name: m.InputName, DataType: tensor.FP32, Shape: m.InputShape}}, info.Inputs)
			require.Equal(t, []TensorInfo{{Name: m.OutputName, DataType: tensor.FP32, Shape: m.OutputShape}}, info.Outputs)
		})
	}
}

func TestReadModelInfoErrors(t *testing.T) {
	initORT(t)
	dir := t.TempDir()
	_, lenet := writeZooModel(t, "lenet5")
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	files := map[string][]byte{
		"truncated.onnx": lenet[:len(lenet)/2],
		"random.onnx":    random,
		"empty.onnx":     {},
	}
	for name, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}

	tests := []struct {
		name    string
		path    string
		wantIs  error
		wantMsg string
	}{
		{name: "missing", path: filepath.Join(dir, "missing.onnx"), wantIs: os.ErrNotExist, wantMsg: "no such file"},
		{name: "directory", path: dir, wantIs: ErrInvalidModel},
		{name: "truncated", path: filepath.Join(dir, "truncated.onnx"), wantIs: ErrInvalidModel, wantMsg: "Protobuf parsing failed"},
		{name: "random bytes", path: filepath.Join(dir, "random.onnx"), wantIs: ErrInvalidModel},
		{name: "empty", path: filepath.Join(dir, "empty.onnx"), wantIs: ErrInvalidModel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadModelInfo(tt.path)
			require.ErrorIs(t, err, tt.wantIs)
			require.Equal(t, 1, strings.Count(err.Error(), tt.path), "file named once: %v", err)
			require.Contains(t, err.Error(), tt.wantMsg)
			require.NotContains(t, err.Error(), "\n")
		})
	}
}
