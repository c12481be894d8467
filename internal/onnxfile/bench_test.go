package onnxfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulet/gpuletd/modelzoo"
)

// BenchmarkReadInterface reads resnet18's inputs and outputs (a 46 MB
// file): the file is sought through, its weights never read.
func BenchmarkReadInterface(b *testing.B) {
	data, err := modelzoo.BuildBytes("resnet18", 1)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "model.onnx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := ReadInterface(path); err != nil {
			b.Fatal(err)
		}
	}
}
