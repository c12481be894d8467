package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/stretchr/testify/require"
)

func TestSearchRate(t *testing.T) {
	slo := 5 * time.Millisecond
	// capacity answers every rate up to c within the SLO and misses above.
	capacity := func(c float64) func(float64) (*loadgen.Report, error) {
		return func(r float64) (*loadgen.Report, error) {
			rep := &loadgen.Report{Sent: 100, OK: 100, Latency: loadgen.Percentiles{P99: time.Millisecond}}
			if r > c {
				rep.Latency.P99 = 2 * slo
			}
			return rep, nil
		}
	}
	o := httpBenchOptions{maxRate: 3200, progress: io.Discard}
	for _, tc := range []struct {
		capacity, want float64
		tried          []float64
	}{
		{1000, 800, []float64{200, 400, 800, 1600}},
		{1e9, 3200, []float64{200, 400, 800, 1600, 3200}},
		{150, 100, []float64{200, 100}},
		{30, 25, []float64{200, 100, 50, 25}},
	} {
		got, probes, err := searchRate(o, slo, capacity(tc.capacity))
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
		var tried []float64
		for _, p := range probes {
			tried = append(tried, p.Rate)
			require.Equal(t, p.Rate <= tc.capacity, p.Kept)
		}
		require.Equal(t, tc.tried, tried)
	}
	_, _, err := searchRate(o, slo, capacity(1))
	require.ErrorContains(t, err, "misses its SLO even at 12.5 requests/s")

	// A failure or a drop is as bad as a late answer.
	for _, bad := range []*loadgen.Report{{Sent: 100, OK: 99}, {Sent: 100, OK: 100, Dropped: 1}} {
		_, probes, _ := searchRate(o, slo, func(float64) (*loadgen.Report, error) { return bad, nil })
		require.False(t, probes[0].Kept)
	}
	boom := errors.New("boom")
	_, _, err = searchRate(o, slo, func(float64) (*loadgen.Report, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
}

func TestProcessCPU(t *testing.T) {
	before, err := processCPU(os.Getpid())
	require.NoError(t, err)
	deadline := time.Now().Add(100 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	after, err := processCPU(os.Getpid())
	require.NoError(t, err)
	require.Greater(t, after, before, "spinning 100 ms shows in /proc")
	_, err = processCPU(1 << 30)
	require.Error(t, err)
}

func TestSetSLO(t *testing.T) {
	repo := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 1))
	path := filepath.Join(repo, "lenet5", "config.yaml")
	require.NoError(t, setSLO(path, 50*time.Millisecond))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), "slo: 50ms ")
	require.Contains(t, string(b), "max_batch_size: 32")
	require.NotContains(t, string(b), "slo: 5ms")
	require.Error(t, setSLO(filepath.Join(repo, "missing.yaml"), time.Second))
}

func TestWriteHTTPBench(t *testing.T) {
	r := &httpBenchResult{
		Device: "cpu", Policy: "eager", Model: "lenet5", Tensors: "json", RequestBytes: 8402, ResponseBytes: 222,
		SLOMS: 5, Rate: 400, DurationS: 10, DaemonP50US: 900, DaemonP99US: 2500, EchoP50US: 250, EchoP99US: 600,
		ExecutorMeanUS: 150, OverheadP50US: 500, FloorUS: 200, RefuseP50US: 700, DecodeP50US: 450, HopP50US: 50,
		DaemonCPUUS: 300, ExecutorCPUUS: -1, DaemonNetCPUUS: 200, ExecutorNetCPUUS: -1, DaemonIdleCPU: 0.06, ExecutorIdleCPU: -1,
		DaemonOK: 3990, DaemonSent: 4000, RequestsPerSecond: 399, DaemonAttainment: 0.99,
	}
	var b strings.Builder
	require.NoError(t, writeHTTPBench(&b, r))
	out := b.String()
	for _, want := range []string{
		"device cpu, policy eager",
		"lenet5, json tensors: 8402-byte requests, 222-byte answers; Poisson 400 requests/s, 10s each",
		"daemon  900µs", "3990 of 4000",
		"overhead p50                      500µs  (daemon p50 − echo p50 − executor; floor 200µs: MISSED)",
		"read + decode + refuse          450µs",
		"daemon 300µs, executor unknown (200µs and unknown net of idle)",
		"daemon 6.0%, executor unknown of a core",
	} {
		require.Contains(t, out, want)
	}
	r.OverheadP50US, r.FloorMet = 150, true
	b.Reset()
	require.NoError(t, writeHTTPBench(&b, r))
	require.Contains(t, b.String(), "floor 200µs: met)")
}

// TestBenchHTTPEmulated runs the whole bench on an emulated device at a
// fixed rate (an SLO of 50 ms keeps a loaded test machine from failing it).
func TestBenchHTTPEmulated(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gpuletdBinary(t), "bench", "http", "--device", "emulated", "--slo", "50ms",
		"--rate", "50", "--duration", "1s", "--probe", "1s", "--warmup", "1s", "--json")
	cmd.Env = daemonEnv(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var res httpBenchResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res), stdout.String())
	require.True(t, strings.HasPrefix(res.Device, "emulated"), res.Device)
	require.Equal(t, "eager", res.Policy)
	require.Equal(t, 50.0, res.Rate)
	require.Equal(t, 50.0, res.SLOMS)
	require.Empty(t, res.Probes, "a given rate is not searched")
	require.Positive(t, res.DaemonOK)
	require.Positive(t, res.EchoOK)
	require.Positive(t, res.DaemonP50US)
	require.Positive(t, res.EchoP50US)
	require.Positive(t, res.ExecutorMeanUS, "the statistics extension reports the executor's time")
	require.Positive(t, res.RefuseP50US, "the refusal path was measured")
	require.Positive(t, res.RequestBytes)
	require.Positive(t, res.ResponseBytes)
	require.InDelta(t, res.DaemonP50US-res.EchoP50US-res.ExecutorMeanUS, res.OverheadP50US, 1e-6)
	require.Contains(t, stderr.String(), "measuring the echo at 50 requests/s")
}
