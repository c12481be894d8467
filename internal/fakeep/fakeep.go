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
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	work, err := os.MkdirTemp("", "fakeep-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(work) }()
	src := filepath.Join(work, "fakeep.c")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(dir, name)
	mode := k
	args := []string{"-shared", "-fPIC", "-o", out}
	if k == MissingDependency {
		mode = Empty
		dep := filepath.Join(work, MissingLibrary)
		depSrc := filepath.Join(work, "dep.c")
		if err := os.WriteFile(depSrc, []byte("int fakeep_dependency(void) { return 1; }\n"), 0o644); err != nil {
			return "", err
		}
		if err := cc(work, "-shared", "-fPIC", "-Wl,-soname,"+MissingLibrary, "-o", dep, depSrc); err != nil {
			return "", err
		}
		// Linked by soname; the file is removed with work, so the loader
		// cannot find it.
		args = append(args, "-DFAKEEP_NEEDS", "-Wl,--no-as-needed", dep)
	}
	args = append(args, fmt.Sprintf("-DFAKEEP_MODE=%d", mode), fmt.Sprintf("-DFAKEEP_MESSAGE=%q", Message), src)
	if err := cc(work, args...); err != nil {
		return "", err
	}
	return out, nil
}

func cc(dir string, args ...string) error {
	cmd := exec.Command("cc", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build fake provider: cc %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}
