package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/modelzoo"
)

// An upgrade installs the new binary where the running daemon's was and
// restarts the service after: an executor the daemon starts in between
// (here, after one was killed) runs the daemon's own binary, not the one
// now at its path, so the two sides of their protocol stay one release.
// Before, it ran whatever the path held.
func TestExecutorsRunTheDaemonsBinaryAfterAnInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 1))
	setProfile(t, repo, "lenet5", "alexnet", "200ms")
	dir := t.TempDir()
	installed, ran := filepath.Join(dir, "gpuletd"), filepath.Join(dir, "the new binary ran")
	env := daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo,
		"GPULETD_DEVICES=[{kind: emulated, profiles: igniter-v100, count: 1}]", "INSTALLED="+installed)
	addr, logs, _ := startDaemonUnder(t, env, "sh", "-c", `cp "$0" "$INSTALLED" && exec "$INSTALLED" "$@"`)
	base := "http://" + addr
	executor := func() (pid int) {
		for _, g := range getStatus(t, base).Gpulets {
			if g.State == "ready" {
				pid = g.PID
			}
		}
		return pid
	}
	require.Eventually(t, func() bool { return executor() != 0 }, 60*time.Second, 100*time.Millisecond, "lenet5 serves; logs:\n%s", logs)

	// The install: a new file at the path (install(1) and cp to a fresh
	// name then mv both leave the running binary's file apart).
	require.NoError(t, os.Remove(installed))
	require.NoError(t, os.WriteFile(installed, []byte("#!/bin/sh\ntouch '"+ran+"'\nexit 1\n"), 0o755))

	old := executor()
	require.NoError(t, syscall.Kill(old, syscall.SIGKILL))
	var pid int
	require.Eventually(t, func() bool {
		pid = executor()
		return pid != 0 && pid != old
	}, 60*time.Second, 100*time.Millisecond, "the executor comes back; logs:\n%s", logs)
	r := do(t, "POST", base+"/v2/models/lenet5/infer", lenetJSON(), nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.NoFileExists(t, ran, "the executor was not started from the path")
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(exe, " (deleted)"), "it runs the daemon's file, which the install unlinked: %s", exe)
}
