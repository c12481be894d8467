package httpbench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/stretchr/testify/require"
)

func goodOptions(exe string) Options {
	return Options{
		Exe: exe, Model: "m", Repository: func(dir string) error {
			if err := os.MkdirAll(filepath.Join(dir, "m"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "m", "config.yaml"), []byte("slo: 5ms  # x\nmax_batch_size: 8\n"), 0o644)
		},
		Device: DeviceAuto, Policy: "eager", MaxRate: 400, Duration: time.Second, Probe: time.Second,
		Concurrency: 4, ProfileTimeout: 10 * time.Second, ReadyTimeout: 10 * time.Second,
	}
}

func TestOptionsRejected(t *testing.T) {
	for name, edit := range map[string]func(*Options){
		"device":      func(o *Options) { o.Device = "gpu" },
		"no binary":   func(o *Options) { o.Exe = "" },
		"no model":    func(o *Options) { o.Model = "" },
		"no repo":     func(o *Options) { o.Repository = nil },
		"duration":    func(o *Options) { o.Duration = 0 },
		"concurrency": func(o *Options) { o.Concurrency = 0 },
		"timeout":     func(o *Options) { o.ReadyTimeout = 0 },
		"rate":        func(o *Options) { o.Rate = -1 },
	} {
		o := goodOptions("/bin/true")
		edit(&o)
		_, err := Run(context.Background(), o)
		require.ErrorIs(t, err, ErrOptions, name)
	}
}

// fakeGpuletd writes a script standing in for the binary: profile fails
// as a command that is not built yet does, serve writes a line and dies.
func fakeGpuletd(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "gpuletd")
	script := `#!/bin/sh
case "$1" in
profile) echo "gpuletd profile: not available yet in this version of gpuletd" >&2; exit 2 ;;
serve) echo "serving on $GPULETD_DEVICES from $GPULETD_MODEL_REPOSITORY with $GPULETD_SCHEDULER_POLICY, leak=$GPULETD_LEAK" >&2; exit 1 ;;
esac
exit 3
`
	require.NoError(t, os.WriteFile(exe, []byte(script), 0o755))
	return exe
}

func TestDeviceFallbackAndDaemonFailure(t *testing.T) {
	exe := fakeGpuletd(t)
	o := goodOptions(exe)
	o.Environ = append(os.Environ(), "GPULETD_LEAK=yes")

	o.Device = DeviceCPU
	_, err := Run(context.Background(), o)
	require.ErrorContains(t, err, "gpuletd profile m --device cpu: exit status 2: gpuletd profile: not available yet")

	var progress strings.Builder
	o.Device, o.Progress = DeviceAuto, &progress
	_, err = Run(context.Background(), o)
	require.ErrorContains(t, err, "gpuletd serve exited (exit status 1)")
	require.ErrorContains(t, err, "serving on "+emulatedDevices, "auto falls back to the emulated device")
	require.ErrorContains(t, err, "with eager, leak=", "the policy is passed, the caller's GPULETD_ settings are not")
	require.NotContains(t, err.Error(), "leak=yes")
	require.Contains(t, progress.String(), "falling back to an emulated device: cpu: gpuletd profile m --device cpu")
}

func TestSetSLO(t *testing.T) {
	o := goodOptions("")
	dir := t.TempDir()
	require.NoError(t, o.Repository(dir))
	path := filepath.Join(dir, "m", "config.yaml")
	require.NoError(t, SetSLO(path, 50*time.Millisecond))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "slo: 50ms # x\nmax_batch_size: 8\n", string(b))
	require.Error(t, SetSLO(filepath.Join(dir, "missing.yaml"), time.Second))
	require.NoError(t, os.WriteFile(path, []byte("max_batch_size: 8\n"), 0o644))
	require.ErrorContains(t, SetSLO(path, time.Second), "no slo line")
}

func TestFill(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	dr := &loadgen.Report{Sent: 1000, OK: 990, Window: 10 * time.Second, Attainment: 0.98, Failed: map[string]int64{"503": 10},
		Latency: loadgen.Percentiles{P50: ms(1.2), P90: ms(1.5), P99: ms(3), Max: ms(9)}}
	er := &loadgen.Report{Sent: 1000, OK: 1000, Window: 10 * time.Second, Latency: loadgen.Percentiles{P50: ms(0.25)}}
	t0 := time.Unix(100, 0)
	before := sample{at: t0, answered: 10, executorCount: 10, executorNS: 5e6, daemonCPU: time.Second, executorCPU: 2 * time.Second, executorPIDs: []int{7},
		hopSum: 0.5, hopCount: 10}
	after := sample{at: t0.Add(10 * time.Second), answered: 1000, executorCount: 1010, executorNS: 5e6 + 1000*800e3,
		daemonCPU: 2 * time.Second, executorCPU: 2500 * time.Millisecond, executorPIDs: []int{7}, hopSum: 0.5 + 1000*90e-6, hopCount: 1010}
	res := &Result{FloorUS: 200}
	res.fill(dr, er, before, after, idleShare{daemon: 0.05, executor: 0.01})
	require.InDelta(t, 800, res.ExecutorMeanUS, 1e-9)
	require.InDelta(t, 90, res.HopMeanUS, 1e-6, "the hop histogram's mean over the measurement")
	require.InDelta(t, 950, res.DifferenceP50US, 1e-9)
	require.InDelta(t, 150, res.OverheadP50US, 1e-9)
	require.True(t, res.FloorMet)
	require.InDelta(t, 99, res.RequestsPerSecond, 1e-9)
	// 1 s of daemon CPU over 990 answers; idle 5% of 10 s is 0.5 s of it.
	require.InDelta(t, 1e6/990, res.DaemonCPUUS, 1e-6)
	require.InDelta(t, 0.5e6/990, res.DaemonNetCPUUS, 1e-6)
	require.InDelta(t, 0.5e6/990, res.ExecutorCPUUS, 1e-6)
	require.InDelta(t, 0.4e6/990, res.ExecutorNetCPUUS, 1e-6)

	// Executors replaced during the run: their CPU is unknown.
	after.executorPIDs = []int{8}
	res = &Result{FloorUS: 200, ExecutorCPUUS: -1, ExecutorNetCPUUS: -1}
	res.fill(dr, er, before, after, idleShare{daemon: 0.05, executor: 0.01})
	require.Equal(t, -1.0, res.ExecutorCPUUS)
	require.Equal(t, -1.0, res.ExecutorNetCPUUS)
}
