package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/stretchr/testify/require"
)

// emulatedMLP writes a repository of its own holding mlp, timed by a
// reference curve (the daemon's behaviour, not timing, is under test), and
// returns it with a daemon environment (and extra) that serves it on an
// emulated V100.
func emulatedMLP(t *testing.T, extra ...string) (repo string, env []string) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"mlp"}, 1))
	setProfile(t, repo, "mlp", "alexnet", "200ms")
	return repo, daemonEnv(t, append([]string{"GPULETD_MODEL_REPOSITORY=" + repo,
		"GPULETD_DEVICES=[{kind: emulated, profiles: igniter-v100, count: 1}]"}, extra...)...)
}

// readyMLPDaemon serves mlp on an emulated V100 with a state of its own and
// waits until the server is ready; it returns the daemon's environment, its
// address, its logs and its process ID.
func readyMLPDaemon(t *testing.T, extra ...string) (env []string, addr string, logs *testbin.SyncBuffer, pid int) {
	t.Helper()
	_, env = emulatedMLP(t, extra...)
	addr, logs, pid = startDaemonUnder(t, env)
	require.Eventually(t, func() bool { return do(t, "GET", "http://"+addr+"/v2/health/ready", nil, nil).code == 200 },
		60*time.Second, 100*time.Millisecond, "logs:\n%s", logs)
	return env, addr, logs, pid
}

// repoDaemon serves mlp on an emulated V100 from a repository of its own,
// with extra environment, and returns the repository, the REST base URL and
// the daemon's process ID.
func repoDaemon(t *testing.T, extra ...string) (repo, base string, pid int) {
	t.Helper()
	repo, env := emulatedMLP(t, extra...)
	addr, logs, pid := startDaemonUnder(t, env)
	base = "http://" + addr
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/mlp/ready", nil, nil).code == 200 },
		60*time.Second, 100*time.Millisecond, "logs:\n%s", logs)
	return repo, base, pid
}

// addLeNet moves a lenet5 folder into repo, as an operator's mv does.
func addLeNet(t *testing.T, repo string) {
	t.Helper()
	staging := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(staging, []string{"lenet5"}, 1))
	setProfile(t, staging, "lenet5", "alexnet", "200ms")
	require.NoError(t, os.Rename(filepath.Join(staging, "lenet5"), filepath.Join(repo, "lenet5")))
}

// eventMessages lists the daemon's event messages.
func eventMessages(t *testing.T, base string) string {
	t.Helper()
	var evs []struct {
		Message string `json:"message"`
	}
	require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/events?limit=1000", nil, nil).body, &evs))
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.Message + "\n")
	}
	return b.String()
}

// With repository_poll set, a model folder moved into the repository is
// served and one removed from it is unloaded, the other models untouched:
// Triton's poll mode. Before, the repository was read at start only.
func TestRepositoryPollFollowsTheRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo, base, _ := repoDaemon(t, "GPULETD_REPOSITORY_POLL=1s")
	require.Equal(t, 404, do(t, "GET", base+"/v2/models/lenet5", nil, nil).code)

	addLeNet(t, repo)
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil).code == 200 },
		30*time.Second, 200*time.Millisecond, "a folder moved in is served; events:\n%s", eventMessages(t, base))
	r := do(t, "POST", base+"/v2/models/lenet5/infer", []byte(`{"inputs":[{"name":"input","shape":[1,1,28,28],"datatype":"FP32","data":[`+strings.Repeat("0,", 783)+`0]}]}`), nil)
	require.Equal(t, 200, r.code, string(r.body))

	require.NoError(t, os.RemoveAll(filepath.Join(repo, "lenet5")))
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/lenet5", nil, nil).code == 404 },
		30*time.Second, 200*time.Millisecond, "a folder removed is unloaded; events:\n%s", eventMessages(t, base))
	require.Contains(t, eventMessages(t, base), "lenet5 left the model repository: unloading it")
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/mlp/ready", nil, nil).code, "the other model serves on")
}

// Without polling, `systemctl reload gpuletd` (SIGHUP) follows the
// repository at once.
func TestReloadFollowsTheRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	conf := filepath.Join(t.TempDir(), "gpuletd.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("strict_readiness: false\n"), 0o644))
	repo, base, pid := repoDaemon(t, "GPULETD_CONFIG="+conf)
	addLeNet(t, repo)
	time.Sleep(1500 * time.Millisecond)
	require.Equal(t, 404, do(t, "GET", base+"/v2/models/lenet5", nil, nil).code, "no poll: nothing happens by itself")

	require.NoError(t, syscall.Kill(pid, syscall.SIGHUP))
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil).code == 200 },
		30*time.Second, 200*time.Millisecond, "events:\n%s", eventMessages(t, base))
	require.Contains(t, eventMessages(t, base), "lenet5 appeared in the model repository: loading it")

	// A folder that cannot be served says why wherever an operator looks,
	// as one broken at start does, until it is removed.
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "broken", "1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "broken", "config.yaml"), []byte("max_batch_size: 4\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "broken", "1", "model.onnx"), []byte("junk"), 0o644))
	require.NoError(t, syscall.Kill(pid, syscall.SIGHUP))
	require.Eventually(t, func() bool { return strings.Contains(eventMessages(t, base), "loading broken failed: ") },
		30*time.Second, 200*time.Millisecond)
	ready := do(t, "GET", base+"/v2/models/broken/ready", nil, nil)
	require.Equal(t, 503, ready.code)
	require.Contains(t, string(ready.body), "the model repository entry is broken: ")
	require.Contains(t, string(ready.body), "slo: missing")
	index := do(t, "POST", base+"/v2/repository/index", nil, nil)
	require.Contains(t, string(index.body), `"name":"broken","state":"UNAVAILABLE","reason":"`)
	ready = do(t, "POST", base+"/v2/repository/index", []byte(`{"ready": true}`), nil)
	require.Equal(t, 200, ready.code, string(ready.body))
	require.NotContains(t, string(ready.body), `"broken"`, "ready only")
	require.Contains(t, string(ready.body), `"name":"lenet5"`)
	require.Equal(t, 400, do(t, "POST", base+"/v2/repository/index", []byte(`{"ready": "yes"}`), nil).code)

	// The server stays ready beside it, unless strict_readiness (turned on
	// by a reload) holds it not ready while broken cannot be served.
	require.Equal(t, 200, do(t, "GET", base+"/v2/health/ready", nil, nil).code)
	require.NoError(t, os.WriteFile(conf, []byte("strict_readiness: true\n"), 0o644))
	require.NoError(t, syscall.Kill(pid, syscall.SIGHUP))
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/health/ready", nil, nil).code == 503 },
		30*time.Second, 200*time.Millisecond, "events:\n%s", eventMessages(t, base))
	require.JSONEq(t, `{"ready": false, "unservable": ["broken"]}`, string(do(t, "GET", base+"/v2/health/ready", nil, nil).body))
	code, out, stderr := runCLI(t, "status", "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Regexp(t, `: not ready, up \S+ \(since [^)]+\)\n`, out)
	require.Contains(t, out, "not ready (strict_readiness) while these cannot be served: broken\n")
	code, out, stderr = runCLI(t, "status", "--short", "--url", base)
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasPrefix(out, "not ready (strict_readiness) while broken cannot be served; "), out)
	require.Regexp(t, `; 1 model cannot be served \(gpuletd status says why\); \d+ warnings? in the last hour \(gpuletd events\)\n$`, out,
		"what to look at, the skipped entry's warning among the last hour's")

	require.NoError(t, os.RemoveAll(filepath.Join(repo, "broken")))
	require.NoError(t, syscall.Kill(pid, syscall.SIGHUP))
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/models/broken/ready", nil, nil).code == 404 },
		30*time.Second, 200*time.Millisecond)
	require.Equal(t, 200, do(t, "GET", base+"/v2/health/ready", nil, nil).code, "strict, and every model serves")
	require.NotContains(t, string(do(t, "POST", base+"/v2/repository/index", nil, nil).body), `"broken"`)
}

// TestStartupModels: startup_models (Triton's --load-model under explicit
// model control) serves the folders it names at start; the others wait in
// the repository, said to be not loaded, until the repository API loads
// them, and do not hold strict readiness; a name with no folder is an
// event.
func TestStartupModels(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo, env := emulatedMLP(t, "GPULETD_STARTUP_MODELS=mlp,mlp5", "GPULETD_STRICT_READINESS=true")
	addLeNet(t, repo)
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "broken", "1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "broken", "1", "model.onnx"), []byte("junk"), 0o644))
	addr, logs, _ := startDaemonUnder(t, env)
	base := "http://" + addr
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/health/ready", nil, nil).code == 200 },
		60*time.Second, 100*time.Millisecond, "ready although lenet5 and broken are not loaded; logs:\n%s", logs)

	ready := do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil)
	require.Equal(t, 404, ready.code)
	require.Contains(t, string(ready.body), `model \"lenet5\" is in the repository but not loaded at start (startup_models); load it with the repository API (gpuletd models load lenet5)`)
	index := string(do(t, "POST", base+"/v2/repository/index", nil, nil).body)
	require.Contains(t, index, `{"name":"lenet5","version":"1","state":"UNAVAILABLE","reason":"not loaded at start (startup_models); load it with the repository API"}`)
	require.Contains(t, index, `{"name":"mlp","version":"1","state":"READY"}`)
	require.Contains(t, index, `"name":"broken","state":"UNAVAILABLE","reason":"`)
	events := eventMessages(t, base)
	require.Contains(t, events, "startup_models names mlp5, which the model repository ("+repo+") has no folder of")
	require.NotContains(t, events, "broken", "a folder left out is not reported as broken")
	code, out, stderr := runCLI(t, "status", "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "in the repository, not loaded (startup_models; gpuletd models load NAME): broken, lenet5\n")

	code, out, stderr = runCLI(t, "models", "load", "lenet5", "--url", base, "--wait", "60s")
	require.Equal(t, 0, code, "%s%s", out, stderr)
	require.Equal(t, 200, do(t, "GET", base+"/v2/models/lenet5/ready", nil, nil).code)
	require.Equal(t, 200, do(t, "GET", base+"/v2/health/ready", nil, nil).code)
	_, out, _ = runCLI(t, "status", "--url", base)
	require.Contains(t, out, "not loaded (startup_models; gpuletd models load NAME): broken\n")
}
