package main

import (
	"bytes"
	"context"
	"encoding/json"
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

func TestPlanAndSimulateCommands(t *testing.T) {
	wl := filepath.Join("..", "..", "sim", "workload", "testdata", "example.yaml")
	code, stdout, stderr := runCLI(t, "plan", "--workload", wl)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "plan (gpulet-int): schedulable")
	require.Contains(t, stdout, "resnet50")

	code, stdout, stderr = runCLI(t, "simulate", "--workload", wl, "--duration", "5s", "--json")
	require.Equal(t, 0, code, stderr)
	var res struct {
		Requests int `json:"requests"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), stdout)
	require.Positive(t, res.Requests)

	traffic := filepath.Join("..", "..", "sim", "workload", "testdata", "traffic-pipeline.yaml")
	code, stdout, stderr = runCLI(t, "plan", "--workload", traffic)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "plan (pipeline)")
	require.Contains(t, stdout, "yolov5x")
	code, stdout, stderr = runCLI(t, "simulate", "--workload", traffic, "--duration", "10s")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "pipeline traffic-analysis (gpuletd scaling)")

	code, _, stderr = runCLI(t, "simulate", "--workload", filepath.Join(t.TempDir(), "missing.yaml"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "missing.yaml")
	// Without a workload file, plan asks a running daemon.
	code, _, stderr = runCLI(t, "plan", "--url", "http://127.0.0.1:1")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "no gpuletd answers at http://127.0.0.1:1: is it running?")
	code, _, stderr = runCLI(t, "plan", "--workload", wl, "--rate", "resnet50=3")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "--workload plans a file's node at the file's rates")
}

func TestUsageErrorsExit2(t *testing.T) {
	code, _, stderr := runCLI(t, "frobnicate")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "unknown command")
	code, _, _ = runCLI(t, "version", "--bogus")
	require.Equal(t, 2, code)
}

// A command that only holds others refuses an unknown one as the root does:
// `gpuletd bench fluctuaton` printed bench's help and succeeded, so a
// script with a typo went on as if the benchmark had run.
func TestUnknownSubcommandsExit2(t *testing.T) {
	tests := []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"bench", "fluctuaton"}, 2, `unknown command "fluctuaton" for "gpuletd bench"; did you mean fluctuation?`},
		{[]string{"models", "lst"}, 2, `unknown command "lst" for "gpuletd models"; did you mean list?`},
		{[]string{"bench", "frobnicate"}, 2, `unknown command "frobnicate" for "gpuletd bench"`},
		{[]string{"models"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			require.Equal(t, tt.code, code, stderr)
			if tt.say == "" {
				require.Contains(t, stdout, "Available Commands:", "alone it prints its help")
				return
			}
			require.Contains(t, stderr, tt.say)
		})
	}
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

func TestPlannerBenchCommands(t *testing.T) {
	code, stdout, stderr := runCLI(t, "bench", "schedulability", "--json")
	require.Equal(t, 0, code, stderr)
	var s struct {
		Scenarios   int            `json:"scenarios"`
		Models      []string       `json:"models"`
		Schedulable map[string]int `json:"schedulable"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &s))
	require.Equal(t, 255, s.Scenarios)
	require.Len(t, s.Models, 4)
	require.Equal(t, 255, s.Schedulable["gpulet-int"])

	code, stdout, stderr = runCLI(t, "bench", "planner")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "64 models × 8 GPUs")

	code, _, stderr = runCLI(t, "bench", "maxrate", "--set", "nope")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "nope")
}

// serve's help names the settings most often set with their variables and
// defaults (taken from the configuration, so they cannot go stale), within
// a terminal's 80 columns.
func TestServeHelp(t *testing.T) {
	code, out, _ := runCLI(t, "serve", "--help")
	require.Equal(t, 0, code)
	long, _, ok := strings.Cut(out, "\nUsage:")
	require.True(t, ok, out)
	require.LessOrEqual(t, widest(long), 80, long)
	for _, want := range []string{
		"  GPULETD_MODEL_REPOSITORY=/var/lib/gpuletd/models\n      the model folders",
		"  GPULETD_LISTEN=127.0.0.1:8700\n",
		"  GPULETD_DEFAULT_SLO=0s\n",
		"  GPULETD_LOG_LEVEL=info\n",
		"gpuletd config prints every setting",
	} {
		require.Contains(t, out, want)
	}
}
