package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/stretchr/testify/require"
)

// freeAddr is a loopback address free a moment ago, one this test binary
// has not handed out before.
func freeAddr(t testing.TB) string {
	t.Helper()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		// A port closed a moment ago can come back from the next Listen:
		// never hand one out twice, or a test's two listeners collide.
		if _, seen := handedOut.LoadOrStore(addr, true); !seen {
			return addr
		}
	}
}

// handedOut are the addresses freeAddr has returned.
var handedOut sync.Map

// withoutGpuletdEnv is this process's environment less every GPULETD_ and OTEL_
// variable: nothing of the caller's configuration reaches a child.
func withoutGpuletdEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GPULETD_") && !strings.HasPrefix(kv, "OTEL_") { // OpenTelemetry's stand in for trace settings
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// daemonEnv is a clean environment for a daemon under test: no GPULETD_
// variables from the caller, the ONNX Runtime library found for this
// checkout, state in a temporary directory.
func daemonEnv(t testing.TB, extra ...string) []string {
	t.Helper()
	env := withoutGpuletdEnv()
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	state := t.TempDir()
	env = append(env,
		"GPULETD_ONNXRUNTIME_LIBRARY="+lib,
		"GPULETD_STATE_DIR="+state,
		"GPULETD_RUNTIME_DIR="+filepath.Join(state, "run"),
		"GPULETD_DEVICES=cpu",
		"GPULETD_LOG_FORMAT=json",
		// Any free port: tests run daemons side by side.
		"GPULETD_GRPC_LISTEN=127.0.0.1:0",
	)
	return append(env, extra...)
}

// startDaemon runs gpuletd serve until the test ends and waits for it to
// answer /v2/health/live.
func startDaemon(t testing.TB, env []string) (addr string, logs *testbin.SyncBuffer) {
	t.Helper()
	addr, logs, _ = startDaemonUnder(t, env)
	return addr, logs
}

// startDaemonUnder is startDaemon with gpuletd serve run by a wrapper
// command (such as prlimit and its flags); it also returns the daemon's
// process ID (a wrapper must exec it).
func startDaemonUnder(t testing.TB, env []string, wrapper ...string) (addr string, logs *testbin.SyncBuffer, pid int) {
	t.Helper()
	return startDaemonOn(t, freeAddr(t), env, wrapper...)
}

// startDaemonOn is startDaemonUnder listening on addr: a daemon started
// again where one before it served.
func startDaemonOn(t testing.TB, addr string, env []string, wrapper ...string) (_ string, logs *testbin.SyncBuffer, pid int) {
	t.Helper()
	argv := append(append([]string(nil), wrapper...), testbin.Gpuletd(t), "serve")
	logs, done, pid := runDaemonProcess(t, argv, append(env, "GPULETD_LISTEN="+addr))
	scheme, probe := probeClient(t, env)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("daemon exited early: %v\n%s", err, logs)
		default:
		}
		resp, err := probe.Get(scheme + addr + "/v2/health/live")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr, logs, pid
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("daemon did not become live; logs:\n%s", logs)
	return "", nil, 0
}

// runDaemonProcess starts the daemon's command line argv with env until
// the test ends, when it must exit cleanly on SIGINT; done says when it
// exits.
func runDaemonProcess(t testing.TB, argv, env []string) (logs *testbin.SyncBuffer, done <-chan error, pid int) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	logs = &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			require.NoError(t, err, "daemon exits cleanly on SIGINT; logs:\n%s", logs)
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("daemon did not stop within 30s of SIGINT; logs:\n%s", logs)
		}
	})
	return logs, exited, cmd.Process.Pid
}

// probeClient is how a daemon started with env is reached: over https,
// trusting its certificate, when env gives it one, and presenting the
// commands' client certificate when env gives that.
func probeClient(t testing.TB, env []string) (scheme string, client *http.Client) {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	c := config.TLS{CertFile: vars["GPULETD_TLS_CERT_FILE"],
		ClientCertFile: vars["GPULETD_TLS_CLIENT_CERT_FILE"], ClientKeyFile: vars["GPULETD_TLS_CLIENT_KEY_FILE"]}
	if !c.Enabled() {
		return "http://", http.DefaultClient
	}
	tc, err := trustConfig(c) // as the commands trust it
	require.NoError(t, err)
	return "https://", &http.Client{Transport: &http.Transport{TLSClientConfig: tc, DisableKeepAlives: true}}
}

func TestServeDemoRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5", "mlp"}, 1))
	env := daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo)
	addr, logs := startDaemon(t, env)
	base := "http://" + addr
	var state string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GPULETD_STATE_DIR="); ok {
			state = v
		}
	}
	_, err := os.Stat(filepath.Join(state, "gpuletd.db"))
	require.NoError(t, err, "the SQLite store lives in state_dir")
	require.Contains(t, logs.String(), `"model":"lenet5"`)
	require.Contains(t, logs.String(), `"model":"mlp"`)

	// The memory each model needs on the CPU, measured while it was
	// profiled at start, and what the CPU's models may hold.
	require.Eventually(t, func() bool {
		return do(t, http.MethodGet, base+"/v2/health/ready", nil, nil).code == http.StatusOK
	}, 90*time.Second, 100*time.Millisecond, "ready; logs:\n%s", logs)
	code, stdout, stderr := runCLI(t, "models", "show", "lenet5", "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `(?m)^PROFILED ON +POINTS +KNEE +MEMORY\ncpu +\d+ +\S+ +\d+ MB \(measured\)$`, stdout)
	code, stdout, stderr = runCLI(t, "status", "--url", base)
	require.Equal(t, 0, code, stderr)
	// (The line wraps at 80 columns: read it whole.) The executors' own
	// memory, which lenet5's profile run told apart, is left out once per
	// executor.
	require.Regexp(t, `(?m)^models on the CPU: [\d.]+ MiB placed of the [\d.]+ [MG]iB they may hold \((the host's|gpuletd's memory limit of) .+ less the daemon's peak of .+ `+
		`and (an executor's own|\d+ executors' own) [\d.]+ MiB( each)?\)$`,
		strings.ReplaceAll(stdout, "\n  ", " "))

	// The planned capacity counts the models' compute alone, and on the CPU
	// the status says so.
	var st adminStatus
	require.Eventually(t, func() bool {
		return adminGet(t.Context(), plainAPI(base), "/api/v1/status", &st) == nil && st.Capacity != nil
	}, 30*time.Second, 100*time.Millisecond, "logs:\n%s", logs)
	require.True(t, st.Capacity.CPU, "the node's device is the CPU")
	code, stdout, stderr = runCLI(t, "status", "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "\n  on the CPU it counts the models' compute alone, and the request path\n")
}

func TestServeSkipsBrokenModelsAndSaysWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 1))
	corrupt := filepath.Join(repo, "broken", "1", "model.onnx")
	require.NoError(t, os.MkdirAll(filepath.Dir(corrupt), 0o755))
	require.NoError(t, os.WriteFile(corrupt, []byte("this is not an onnx file"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "broken", "config.yaml"), []byte("slo: 10ms\nmax_batch_size: 4\n"), 0o644))
	noConfig := filepath.Join(repo, "noconfig", "1")
	require.NoError(t, os.MkdirAll(noConfig, 0o755))

	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo))
	base := "http://" + addr
	// Ready once lenet5 serves: the broken entries have their reasons.
	require.Eventually(t, func() bool {
		return do(t, http.MethodGet, base+"/v2/health/ready", nil, nil).code == http.StatusOK
	}, 90*time.Second, 100*time.Millisecond, "ready; logs:\n%s", logs)
	require.Equal(t, http.StatusOK, do(t, http.MethodGet, base+"/v2/models/lenet5/ready", nil, nil).code)

	ready := do(t, http.MethodGet, base+"/v2/models/broken/ready", nil, nil)
	require.Equal(t, http.StatusServiceUnavailable, ready.code)
	var rd struct {
		Ready  bool   `json:"ready"`
		Reason string `json:"reason"`
	}
	require.NoError(t, json.Unmarshal(ready.body, &rd))
	require.False(t, rd.Ready)
	require.Contains(t, rd.Reason, "the model repository entry is broken: invalid model: "+corrupt)

	infer := do(t, http.MethodPost, base+"/v2/models/broken/infer", []byte(`{"inputs":[]}`), nil)
	require.Equal(t, http.StatusServiceUnavailable, infer.code)
	require.Contains(t, string(infer.body), `broken\" cannot be served: the model repository entry is broken: invalid model: `+corrupt)
	meta := do(t, http.MethodGet, base+"/v2/models/noconfig", nil, nil)
	require.Equal(t, http.StatusServiceUnavailable, meta.code)
	require.Contains(t, string(meta.body), "config.yaml: missing")
	require.Equal(t, http.StatusNotFound, do(t, http.MethodGet, base+"/v2/models/absent/ready", nil, nil).code)

	st := getStatus(t, base)
	reasons := map[string]string{}
	for _, m := range st.Models {
		reasons[m.Name] = m.Reason
	}
	require.Contains(t, reasons["broken"], corrupt)
	require.Contains(t, reasons["noconfig"], "config.yaml: missing")
	require.Empty(t, reasons["lenet5"])

	// An alert sees it too: one state per model, 1 where it is.
	metrics := string(do(t, http.MethodGet, base+"/metrics", nil, nil).body)
	for _, line := range []string{
		`gpuletd_model_state{model="broken",state="unservable"} 1`,
		`gpuletd_model_state{model="broken",state="ready"} 0`,
		`gpuletd_model_state{model="noconfig",state="unservable"} 1`,
		`gpuletd_model_state{model="lenet5",state="ready"} 1`,
		`gpuletd_model_state{model="lenet5",state="unservable"} 0`,
	} {
		require.Contains(t, metrics, line+"\n")
	}

	lines := logLines(logs.String(), "model repository entry skipped")
	require.Len(t, lines, 2, logs.String())
	all := strings.Join(lines, "\n")
	require.Contains(t, all, corrupt, "the corrupt file is named")
	require.Contains(t, all, filepath.Join(repo, "noconfig", "config.yaml")+": missing")
	require.Contains(t, logs.String(), `"model":"lenet5"`, "good models are still served")

	// gpuletd models show says why, and what the events hold for it.
	code, stdout, stderr := runCLI(t, "models", "show", "broken", "--url", base)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `answered 503 Service Unavailable: model "broken" cannot be served: the model repository entry is broken: invalid model: `+corrupt)
	require.Regexp(t, `^\nEVENTS \(the newest; all: gpuletd events --model broken\)\n\S+ \S+ #\d+ warning model_invalid: model repository entry skipped: .*\(model=broken\)\n$`, stdout)
}

func logLines(logs, msg string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		if strings.Contains(sc.Text(), msg) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// runOnce runs the binary to completion and returns its exit code and output.
func runOnce(t *testing.T, bin, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	}
	require.NoError(t, err)
	return 0, out.String()
}

func TestMissingONNXRuntimeIsOneClearLine(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	// A copy of the binary outside the checkout finds no library next to it
	// nor above its working directory.
	dir := t.TempDir()
	bin := filepath.Join(dir, "gpuletd")
	src, err := os.ReadFile(testbin.Gpuletd(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, src, 0o755))
	repo := filepath.Join(dir, "models")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	var env []string
	for _, kv := range daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_LISTEN="+freeAddr(t)) {
		if !strings.HasPrefix(kv, "GPULETD_ONNXRUNTIME_LIBRARY=") {
			env = append(env, kv)
		}
	}
	code, out := runOnce(t, bin, dir, env, "serve")
	require.Equal(t, 1, code, out)
	require.Equal(t, 1, strings.Count(strings.TrimSpace(out), "\n")+1, "one line: %q", out)
	require.Contains(t, out, "make deps")
	require.Contains(t, out, "GPULETD_ONNXRUNTIME_LIBRARY")

	code, out = runOnce(t, bin, dir, append(env, "GPULETD_ONNXRUNTIME_LIBRARY=/nonexistent/libonnxruntime.so.1"), "serve")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "/nonexistent/libonnxruntime.so.1")
}

func TestServeRefusesBadConfigAndMissingRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	bin := testbin.Gpuletd(t)
	cfg := filepath.Join(t.TempDir(), "gpuletd.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("scheduler:\n  policy: fastest\n"), 0o644))
	code, out := runOnce(t, bin, t.TempDir(), daemonEnv(t), "serve", "--config", cfg)
	require.Equal(t, 1, code)
	require.Contains(t, out, cfg)
	require.Contains(t, out, `scheduler.policy: "fastest" is not allowed`)

	missing := filepath.Join(t.TempDir(), "nothing-here")
	code, out = runOnce(t, bin, t.TempDir(), daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+missing), "serve")
	require.Equal(t, 1, code)
	require.Contains(t, out, missing+" does not exist")
	require.Contains(t, out, "gpuletd models synth")
}
