package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUnavailableCommandsExit2WithOneLine(t *testing.T) {
	for _, args := range [][]string{{"simulate"}} {
		code, _, stderr := runCLI(t, args...)
		require.Equal(t, 2, code, args)
		require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		require.Contains(t, stderr, "not available yet")
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	code, _, stderr := runCLI(t, "frobnicate")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "unknown command")
	code, _, _ = runCLI(t, "version", "--bogus")
	require.Equal(t, 2, code)
}

func TestConfigCommand(t *testing.T) {
	t.Setenv("GPULETD_LISTEN", "127.0.0.1:9000")
	t.Setenv("GPULETD_DEVICES", "cpu")
	code, stdout, _ := runCLI(t, "config")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "listen: 127.0.0.1:9000 # env GPULETD_LISTEN")
	require.Contains(t, stdout, "devices: cpu # env GPULETD_DEVICES")
	require.Contains(t, stdout, "policy: deferred # default")
}

func TestConfigFlagAndBadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("scheduler:\n  policy: eager\n"), 0o644))
	code, stdout, _ := runCLI(t, "config", "--config", good, "--log-level", "debug")
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "policy: eager # file "+good)
	require.Contains(t, stdout, "level: debug # flag --log-level")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("partitioning:\n  backend: slices\n"), 0o644))
	t.Setenv("GPULETD_CONFIG", bad)
	code, _, stderr := runCLI(t, "config")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, bad)
	require.Contains(t, stderr, `partitioning.backend: "slices" is not allowed; use one of mps, mig, none`)
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runCLI(t, "version")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(stdout, "gpuletd "), stdout)
}
