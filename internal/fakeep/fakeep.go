// Package fakeep builds stand-ins for ONNX Runtime's plugin execution
// provider libraries, for tests that exercise provider loading without a
// GPU: a provider that fails with a known message, one that offers no
// device, a library that is not a provider, and one whose dependency is
// missing. It needs a C compiler (cc).
package fakeep

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulet/gpuletd/internal/cbuild"
)

//go:embed src/fakeep.c.txt
var source string

// Kind selects the stand-in's behaviour.
type Kind int

// The stand-ins.
const (
	// Failing: CreateEpFactories fails with Message.
	Failing Kind = 1
	// Empty: CreateEpFactories succeeds with no factory.
	Empty Kind = 2
	// NotPlugin: no CreateEpFactories.
	NotPlugin Kind = 3
	// MissingDependency: linked against MissingLibrary, which is absent.
	MissingDependency Kind = 4
)

// Message is the error a Failing stand-in returns.
const Message = "CUDA driver version is insufficient for CUDA runtime version"

// MissingLibrary is the library a MissingDependency stand-in needs.
const MissingLibrary = "libfakeep_cublasLt.so.13"

// Build compiles the stand-in of kind k as dir/name and returns its path.
func Build(t testing.TB, dir, name string, k Kind) string {
	t.Helper()
	path, err := build(dir, name, k)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func build(dir, name string, k Kind) (string, error) {
	out := filepath.Join(dir, name)
	mode := k
	var args []string
	if k == MissingDependency {
		mode = Empty
		work, err := os.MkdirTemp("", "fakeep-")
		if err != nil {
			return "", err
		}
		defer func() { _ = os.RemoveAll(work) }()
		dep := filepath.Join(work, MissingLibrary)
		if err := cbuild.Shared(dep, "int fakeep_dependency(void) { return 1; }\n", "-Wl,-soname,"+MissingLibrary); err != nil {
			return "", err
		}
		// Linked by soname; the file is removed with work, so the loader
		// cannot find it.
		args = append(args, "-DFAKEEP_NEEDS", "-Wl,--no-as-needed", dep)
	}
	args = append(args, fmt.Sprintf("-DFAKEEP_MODE=%d", mode), fmt.Sprintf("-DFAKEEP_MESSAGE=%q", Message))
	if err := cbuild.Shared(out, source, args...); err != nil {
		return "", err
	}
	return out, nil
}
