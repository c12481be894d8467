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
	build := exec.Command("go", "build", "-o", fakeControl, "./testdata/fakempscontrol")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build fake nvidia-cuda-mps-control:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}
