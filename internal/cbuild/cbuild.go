// Package cbuild compiles C sources into shared libraries, for tests that
// have a library loaded: stand-ins for ONNX Runtime's plugin execution
// providers and custom operator libraries. It needs a C compiler (cc).
package cbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Shared compiles source, C, into the shared library out (its folder made
// if need be), with args given to cc before the source: macros, linker
// options, libraries to link.
func Shared(out, source string, args ...string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "cbuild-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	src := filepath.Join(work, "lib.c")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		return err
	}
	all := append(append([]string{"-shared", "-fPIC", "-o", out}, args...), src)
	cmd := exec.Command("cc", all...)
	cmd.Dir = work
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: cc %s: %w: %s", filepath.Base(out), strings.Join(all, " "), err, b)
	}
	return nil
}
