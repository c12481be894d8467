package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/sim/loadgen/httpbench"
	"github.com/stretchr/testify/require"
)

func TestWriteHTTPBench(t *testing.T) {
	r := &httpbench.Result{
		Device: "cpu", Policy: "eager", Model: "lenet5", Tensors: "json", RequestBytes: 8402, ResponseBytes: 222,
		SLOMS: 5, Rate: 400, DurationS: 10, DaemonP50US: 900, DaemonP99US: 2500, EchoP50US: 250, EchoP99US: 600,
		ExecutorMeanUS: 150, HopMeanUS: 120, OverheadP50US: 500, FloorUS: 200, RefuseP50US: 700, DecodeP50US: 450, HopP50US: 50,
		DaemonCPUUS: 300, ExecutorCPUUS: -1, EchoCPUUS: 90, DaemonNetCPUUS: 200, ExecutorNetCPUUS: -1, DaemonIdleCPU: 0.06, ExecutorIdleCPU: -1,
		DaemonAllocs: 118.4, DaemonAllocBytes: 10650,
		DaemonOK: 3990, DaemonSent: 4000, RequestsPerSecond: 399, DaemonAttainment: 0.99,
	}
	var b strings.Builder
	require.NoError(t, writeHTTPBench(&b, r))
	out := b.String()
	require.LessOrEqual(t, widest(out), 80, out)
	for _, want := range []string{
		"device     cpu, policy eager",
		"workload   lenet5, json tensors, 8402-byte requests, 222-byte answers",
		"rate       Poisson 400 requests/s, 10s for each server",
		"daemon  900µs", "3990 of 4000",
		"overhead p50            500µs  daemon − echo − executor; floor 200µs: MISSED",
		"  read, decode, refuse  450µs  a decoded request refused with 400, − echo",
		"  executor hop, mean    120µs  the hop outside the executor: wake-ups, framing",
		"CPU per request         300µs  daemon; executor unknown; echo 90µs",
		"echo       a process of its own, as the daemon",
		"  net of idle           200µs  daemon; executor unknown",
		"CPU when idle           6.0%   of a core, daemon; executor unknown",
		"allocations             118    objects of the daemon per request, 10.4 KiB",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "not on the CPU")
	r.OverheadP50US, r.FloorMet, r.DeviceNote = 150, true, "cpu: gpuletd profile lenet5 --device cpu: exit status 2"
	b.Reset()
	require.NoError(t, writeHTTPBench(&b, r))
	require.Contains(t, b.String(), "floor 200µs: met")
	require.Contains(t, b.String(), "not on the CPU  cpu: gpuletd profile lenet5")
	r.Echo = "in-process"
	b.Reset()
	require.NoError(t, writeHTTPBench(&b, r))
	require.Contains(t, b.String(), "in the bench's process (spared a process wake-up)")
	r.Protocol, r.RefuseP50US, r.HopMeanUS = "grpc", 0, 0
	b.Reset()
	require.NoError(t, writeHTTPBench(&b, r))
	require.Contains(t, b.String(), "gRPC path       gpuletd serve against a bare gRPC server")
	require.NotContains(t, b.String(), "read, decode, refuse", "no refusal run over gRPC")
	require.NotContains(t, b.String(), "executor hop", "not shown when not measured")
}

// TestBenchHTTPEmulated runs the whole bench on an emulated device at a
// fixed rate (an SLO of 50 ms keeps a loaded test machine from failing it).
func TestBenchHTTPEmulated(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	bin := testbin.Gpuletd(t) // built before the clock starts: a cold build takes minutes
	for _, proto := range []string{"http", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "bench", proto, "--device", "emulated", "--slo", "50ms",
				"--rate", "50", "--duration", "1s", "--probe", "1s", "--warmup", "1s", "--json")
			cmd.Env = daemonEnv(t)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), stderr.String())
			var res httpbench.Result
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &res), stdout.String())
			require.Equal(t, proto, res.Protocol)
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
			if proto == "http" {
				require.Positive(t, res.RefuseP50US, "the refusal path was measured")
			}
			require.Equal(t, "process", res.Echo, "the bare server runs as a process of its own")
			require.GreaterOrEqual(t, res.EchoCPUUS, 0.0, "the bare server's CPU is read from its process")
			require.Positive(t, res.RequestBytes)
			require.Positive(t, res.ResponseBytes)
			require.InDelta(t, res.DaemonP50US-res.EchoP50US-res.ExecutorMeanUS, res.OverheadP50US, 1e-6)
			require.Contains(t, stderr.String(), "measuring the echo at 50 requests/s")
			for _, k := range []string{"daemon_p50_us", "echo_p50_us", "overhead_p50_us", "daemon_p99_us", "requests_per_second"} {
				require.Contains(t, stdout.String(), `"`+k+`"`)
			}
		})
	}
}

// TestAKilledBenchLeavesNoDaemon kills the bench while it measures: the
// daemon it started must not outlive it (it would hold its port, its
// executors and a core).
func TestAKilledBenchLeavesNoDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	cmd := exec.Command(testbin.Gpuletd(t), "bench", "http", "--device", "emulated", "--slo", "50ms",
		"--rate", "20", "--duration", "1m", "--warmup", "1s")
	// Killed, the bench cannot remove its directory: it goes with the
	// test's.
	cmd.Env = append(daemonEnv(t), "TMPDIR="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := benchDaemonPID(t, stderr)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.Eventually(t, func() bool { return !processRuns(pid) }, 30*time.Second, 50*time.Millisecond,
		"the daemon (pid %d) outlived the bench killed", pid)
}

// benchDaemonPID reads the bench's progress until it names its daemon's pid.
func benchDaemonPID(t *testing.T, progress io.Reader) int {
	t.Helper()
	found := make(chan int, 1)
	go func() {
		defer close(found)
		s := bufio.NewScanner(progress)
		for s.Scan() {
			var addr, device string
			var pid int
			if _, err := fmt.Sscanf(s.Text(), "daemon on %s (pid %d), device %s", &addr, &pid, &device); err == nil {
				found <- pid
				break
			}
		}
		_, _ = io.Copy(io.Discard, progress)
	}()
	select {
	case pid, ok := <-found:
		require.True(t, ok, "the bench ended without naming its daemon")
		return pid
	case <-time.After(2 * time.Minute):
		require.FailNow(t, "the bench did not start its daemon within 2 minutes")
		return 0
	}
}

// processRuns tells whether pid is a live process (not gone, not a zombie
// waiting to be reaped).
func processRuns(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	return ok && !strings.HasPrefix(rest, "Z")
}
