package mps

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// fakeControl is the path of the fake nvidia-cuda-mps-control built for the tests.
var fakeControl string

// fakeControlEnv names a fake nvidia-cuda-mps-control built beforehand, for
// machines without a Go toolchain (scripts/gpu/bundle.sh builds one).
const fakeControlEnv = "GPULETD_TEST_FAKE_MPS_CONTROL"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	dir, err := os.MkdirTemp("", "gpuletd-mps-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeControl = filepath.Join(dir, "nvidia-cuda-mps-control")
	if err := buildFakeControl(fakeControl); err != nil {
		fmt.Fprintln(os.Stderr, "build fake nvidia-cuda-mps-control:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// buildFakeControl puts the fake nvidia-cuda-mps-control at path: a copy of
// the one fakeControlEnv names, else built with go.
func buildFakeControl(path string) error {
	if pre := os.Getenv(fakeControlEnv); pre != "" {
		b, err := os.ReadFile(pre)
		if err != nil {
			return err
		}
		return os.WriteFile(path, b, 0o755)
	}
	build := exec.Command("go", "build", "-o", path, "./testdata/fakempscontrol")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	return build.Run()
}
