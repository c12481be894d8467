package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/profiler/store"
)

// gpuletd events lists a daemon's history and follows it live and through
// a restart of the daemon, printing every event once; the follow's open
// stream does not hold the daemon's stop up.
func TestEventsFollowsTheDaemonThroughARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	// Packed while idle, the start is one executor and one plan: the
	// history's first three events.
	env, addr, logs, pid := readyMLPDaemon(t, "GPULETD_SCHEDULER_IDLE_PLAN=pack")
	bin, dir := testbin.Gpuletd(t), t.TempDir()
	cli := append(env, "GPULETD_LISTEN="+addr)

	code, out := runOnce(t, bin, dir, cli, "events")
	require.Equal(t, 0, code, out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d #1 info daemon_start: gpuletd \S+ started \(pid \d+\) \((boot_id=\S+ )?(oom_kills=\d+ )?pid=\d+ version=\S+\)$`, lines[0], "a first start")
	require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d #2 info executor_start: executor started \(device=emu0 gpulet=emu0-20-1 models=mlp pid=\d+ provider=emulated size=20\)$`, lines[1])
	require.Regexp(t, `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d #3 info reorganize: plan applied: emu0: 20%\[mlp×1@1/s\] \(loaded=0 reason=start retired=0 started=1\)$`, lines[2])
	metrics := string(do(t, "GET", "http://"+addr+"/metrics", nil, nil).body)
	require.Contains(t, metrics, `gpuletd_events_total{kind="daemon_start",severity="info"} 1`+"\n")
	require.Contains(t, metrics, `gpuletd_events_total{kind="executor_start",severity="info"} 1`+"\n")
	require.Contains(t, metrics, `gpuletd_events_total{kind="reorganize",severity="info"} 1`+"\n")
	require.Contains(t, metrics, `gpuletd_events_total{kind="profile_job",severity="error"} 0`+"\n", "an alert's increase() sees the first")
	code, out = runOnce(t, bin, dir, cli, "events", "-n", "1")
	require.Equal(t, 0, code, out)
	require.Equal(t, lines[2]+"\n", out)
	code, out = runOnce(t, bin, dir, cli, "events", "--since", "2")
	require.Equal(t, 0, code, out)
	require.Equal(t, lines[2]+"\n", out, "after an ID")
	code, out = runOnce(t, bin, dir, cli, "events", "--since", "10m")
	require.Equal(t, 0, code, out)
	require.Equal(t, strings.Join(lines, "\n")+"\n", out, "from a moment on")
	code, out = runOnce(t, bin, dir, cli, "events", "--since", "10m", "-n", "1")
	require.Equal(t, 0, code, out)
	require.Equal(t, lines[2]+"\n", out, "the last of those from a moment on")
	code, out = runOnce(t, bin, dir, cli, "events", "--since", "2099-01-01")
	require.Equal(t, 0, code, out)
	require.Empty(t, out)
	code, out = runOnce(t, bin, dir, cli, "events", "--since", "soon")
	require.Equal(t, 2, code, out)
	code, out = runOnce(t, bin, dir, cli, "events", "--kind", "executor_starts")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, `answered 400 Bad Request: unknown event kind "executor_starts": one of reorganize, executor_start,`)
	code, out = runOnce(t, bin, dir, cli, "events", "--severity", "warn")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, `--severity: unknown severity "warn": one of debug, info, warning, error`)

	follow := exec.Command(bin, "events", "-f", "-n", "1", "--json")
	follow.Env, follow.Dir = cli, dir
	stdout, stderr := &testbin.SyncBuffer{}, &testbin.SyncBuffer{}
	follow.Stdout, follow.Stderr = stdout, stderr
	require.NoError(t, follow.Start())
	followed := make(chan error, 1)
	go func() { followed <- follow.Wait() }()
	t.Cleanup(func() {
		_ = follow.Process.Kill()
		<-followed
	})
	kinds := func() []string {
		var ks []string
		for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			if l == "" {
				continue
			}
			var e daemon.EventDoc
			require.NoError(t, json.Unmarshal([]byte(l), &e), l)
			ks = append(ks, e.Kind)
		}
		return ks
	}
	require.Eventually(t, func() bool { return len(kinds()) == 1 }, 10*time.Second, 20*time.Millisecond, "stderr: %s", stderr)

	// Live.
	code, out = runOnce(t, bin, dir, cli, "models", "load", "mlp")
	require.Equal(t, 0, code, out)
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), `"kind":"model_load"`) }, 10*time.Second, 20*time.Millisecond)
	code, out = runOnce(t, bin, dir, cli, "events", "--model", "mlp")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `^\S+ \S+ #2 info executor_start: .* models=mlp .*\n\S+ \S+ #4 info model_load: .*\(model=mlp\)\n$`, out,
		"the events recorded for mlp: its executor's start and its load")
	code, out = runOnce(t, bin, dir, cli, "events", "--severity", "warning", "--kind", "model_load")
	require.Equal(t, 0, code, out)
	require.Empty(t, out)

	// The daemon stops: the stream ends, without keeping the HTTP server
	// past its grace (which the executors' stop then lacked).
	require.NoError(t, syscall.Kill(pid, syscall.SIGINT))
	require.Eventually(t, func() bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }, 30*time.Second, 20*time.Millisecond)
	require.Contains(t, logs.String(), `"msg":"stopped"`)
	require.NotContains(t, logs.String(), "http shutdown")
	require.NotContains(t, logs.String(), "stop executors")
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "stopped answering") }, 10*time.Second, 20*time.Millisecond)
	before := len(kinds())
	code, out = runOnce(t, bin, dir, cli, "events", "-n", "1", "--kind", "daemon_stop")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `daemon_stop: gpuletd stopped after \S+ \(interrupt signal received\) \(cause="interrupt signal received" ran=\S+ version=\S+\)\n$`, out,
		"the stop is the history's, read from the database")

	// With none answering, the state folder's database still tells.
	code, out = runOnce(t, bin, dir, cli, "events", "-n", "2", "--kind", "executor_stop,model_load")
	require.Equal(t, 0, code, out)
	state := envValue(env, "GPULETD_STATE_DIR")
	require.Contains(t, out, "no gpuletd answers at http://"+addr+": is it running?; the events below are read from its database, "+filepath.Join(state, store.FileName)+"\n")
	require.Regexp(t, `model_load: .*\n.* executor_stop: executor stopped \(gpulet=emu0-20-1 models=mlp\)\n`, out)
	for _, p := range store.Files(filepath.Join(state, store.FileName))[1:] {
		require.NoFileExists(t, p, "what SQLite made to read it is gone")
	}
	code, out = runOnce(t, bin, dir, cli, "events", "--url", addr)
	require.Equal(t, 1, code, out)
	require.Equal(t, "no gpuletd answers at http://"+addr+": is it running?\n", out, "a daemon asked for by --url: not the configured one's folder")

	// Started again on the same state and address: the follow goes on
	// with what the new daemon records, each event once.
	startDaemonOn(t, addr, env)
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "answers again") }, 30*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		ks := kinds()
		return len(ks) > before && ks[len(ks)-1] == "reorganize"
	}, 60*time.Second, 20*time.Millisecond, "stdout: %s", stdout)
	require.Contains(t, kinds()[before:], "executor_start")
	require.Contains(t, kinds()[before:], "daemon_start")
	code, out = runOnce(t, bin, dir, cli, "events", "--kind", "daemon_start", "--severity", "warning")
	require.Equal(t, 0, code, out)
	require.Empty(t, out, "the run before stopped: no warning at the start")
	var last int64
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var e daemon.EventDoc
		require.NoError(t, json.Unmarshal([]byte(l), &e))
		require.Greater(t, e.ID, last, "every event once, in order: %s", stdout)
		last = e.ID
	}

	require.NoError(t, follow.Process.Signal(os.Interrupt))
	require.NoError(t, <-followed, "interrupted, a follow exits 0; stderr: %s", stderr)
	followed <- nil // for the cleanup
}
