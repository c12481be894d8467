package onnxrt

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// fresh records what the package did before anything initialized ONNX
// Runtime in this test process; TestMain fills it in because Init's effect
// lasts for the whole process.
var fresh struct {
	badLibrary     string
	badInitErr     error
	readBeforeInit error
	loadedAfterBad bool
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "onnxrt-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fresh.badLibrary = filepath.Join(dir, LibraryName)
	if err := os.WriteFile(fresh.badLibrary, []byte("not a shared library\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_, fresh.readBeforeInit = ReadModelInfo(fresh.badLibrary)
	fresh.badInitErr = Init(fresh.badLibrary)
	_, fresh.loadedAfterBad = Library()

	code := m.Run()
	_ = os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// initORT loads the development copy of ONNX Runtime (found by walking up to
// .deps/onnxruntime) and returns its path.
func initORT(t *testing.T) string {
	t.Helper()
	path, err := FindLibrary("")
	if err != nil {
		t.Fatalf("%v (tests need the library: make deps)", err)
	}
	if err := Init(path); err != nil {
		t.Fatal(err)
	}
	return path
}
