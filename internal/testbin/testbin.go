// Package testbin serves tests that run gpuletd itself as a child process
// (the daemon, its executors): it builds the binary once per test process
// and collects a child's output. It also runs the other programs such
// tests drive as an operator would (a sqlite3 shell).
package testbin

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// EnvBinary names a gpuletd binary to use instead of building one, for
// test binaries run on a machine without Go (scripts/gpu/).
const EnvBinary = "GPULETD_TEST_BINARY"

// Gpuletd returns the path of a gpuletd binary built from this checkout,
// building it on the first call (or the one EnvBinary names). Packages that
// call it remove it with Cleanup when their tests end.
func Gpuletd(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvBinary); p != "" {
		return p
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "gpuletd-test-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "gpuletd")
		out, err := exec.Command("go", "build", "-o", built.path, "github.com/gpulet/gpuletd/cmd/gpuletd").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build gpuletd: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// Cleanup removes the binary Gpuletd built, if any. Call it from TestMain
// once the tests have run.
func Cleanup() {
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}

// SyncBuffer collects a child's output from its two writers (stdout and
// stderr) safely.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
