package selfexe

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// helperEnv makes the test binary, run again, act as a helper.
const helperEnv = "SELFEXE_TEST_HELPER"

// TestMain lets the test binary run as the helpers of
// TestTheRunningBinaryRunsAfterItsFileIsReplaced: "spawn" replaces its own
// file and runs itself again through Path; "child" says it is the test
// binary.
func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "spawn":
		self, err := os.Executable()
		must(err)
		// An install puts another program where this binary was.
		must(os.Remove(self))
		must(os.WriteFile(self, []byte("#!/bin/sh\necho the newly installed binary\n"), 0o755))
		cmd, err := Command(context.Background(), "")
		must(err)
		cmd.Env = append(os.Environ(), helperEnv+"=child")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		must(cmd.Run())
		os.Exit(0)
	case "child":
		self, err := os.Executable()
		must(err)
		_, _ = io.WriteString(os.Stdout, "the running binary, as "+os.Args[0]+" ("+filepath.Base(self)+")\n")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func TestTheRunningBinaryRunsAfterItsFileIsReplaced(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	b, err := os.ReadFile(self)
	require.NoError(t, err)
	copied := filepath.Join(t.TempDir(), "gpuletd")
	require.NoError(t, os.WriteFile(copied, b, 0o755))

	cmd := exec.Command(copied)
	cmd.Env = append(os.Environ(), helperEnv+"=spawn")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "the running binary, as "+copied+" (gpuletd)\n", string(out),
		"run as the path it was started from, though that path now holds another program")
}
