package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/profiler/store"
)

// TestStoreItsUserMayNotWrite starts the daemon on a state folder whose
// database its user may not write, as after `sudo gpuletd serve` was tried
// before the service (run as gpuletd) was installed: as root the daemon
// runs as nobody over a database root made; as another user the database
// is made read-only. The daemon serves read-only and says, in status,
// events and the model's reason, whose file it is and what to run; once
// that is run it writes again, profiles the model whose profile could not
// be stored, and serves it, without a restart.
func TestStoreItsUserMayNotWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	root := os.Geteuid() == 0
	var wrapper []string
	if root {
		setpriv, err := exec.LookPath("setpriv")
		require.NoError(t, err, "setpriv (util-linux) runs the daemon as nobody; make test-deps installs it")
		wrapper = []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}
	}
	// nobody must reach the binary, the library, the models and the state.
	shared := func() string {
		d := t.TempDir()
		require.NoError(t, os.Chmod(d, 0o755))
		require.NoError(t, os.Chmod(filepath.Dir(d), 0o755))
		return d
	}
	require.NoError(t, os.Chmod(filepath.Dir(testbin.Gpuletd(t)), 0o755))
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	libCopy := filepath.Join(shared(), onnxrt.LibraryName)
	copyFile(t, lib, libCopy)
	repo := filepath.Join(shared(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"mlp"}, 1))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "mlp", "config.yaml"), []byte("slo: 200ms\nmax_batch_size: 8\n"), 0o644))
	state := filepath.Join(shared(), "state")
	require.NoError(t, os.Mkdir(state, 0o755))
	dbPath := filepath.Join(state, "gpuletd.db")
	st, err := store.Open(context.Background(), dbPath)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	says, fix := "chmod -R u+w "+state, []string{"chmod", "-R", "u+w", state}
	if root {
		// The folder is the daemon's user's (install.sh makes it so), the
		// database root's.
		require.NoError(t, os.Chown(state, 65534, 65534))
		says = "belongs to root:root and gpuletd runs as nobody (uid 65534)"
		fix = []string{"chown", "-R", "65534:65534", state}
	} else {
		require.NoError(t, os.Chmod(dbPath, 0o444))
	}
	t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", state).Run() })

	env := daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_ONNXRUNTIME_LIBRARY="+libCopy,
		"GPULETD_STATE_DIR="+state, "GPULETD_RUNTIME_DIR="+filepath.Join(state, "run"))
	addr, logs, _ := startDaemonUnder(t, env, wrapper...)
	base := "http://" + addr

	type status struct {
		Store struct {
			Writable bool   `json:"writable"`
			Reason   string `json:"reason"`
		} `json:"store"`
		Models []struct {
			Name   string `json:"name"`
			Ready  bool   `json:"ready"`
			Reason string `json:"reason"`
		} `json:"models"`
	}
	var sd status
	read := func() {
		require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/status", nil, nil).body, &sd))
	}
	require.Eventually(t, func() bool {
		read()
		return len(sd.Models) == 1 && strings.Contains(sd.Models[0].Reason, "profiling on cpu failed")
	}, time.Minute, 200*time.Millisecond, "logs:\n%s", logs)
	require.False(t, sd.Store.Writable)
	require.Contains(t, sd.Store.Reason, says)
	require.Contains(t, sd.Store.Reason, "let the daemon's user write its files")
	require.Contains(t, sd.Models[0].Reason, says, "the model says why it is not served")
	require.False(t, sd.Models[0].Ready)
	require.Contains(t, string(do(t, "GET", base+"/metrics", nil, nil).body), "gpuletd_store_writable 0")

	out, err := exec.Command(fix[0], fix[1:]...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Eventually(t, func() bool {
		read()
		return sd.Store.Writable && len(sd.Models) == 1 && sd.Models[0].Ready
	}, time.Minute, 200*time.Millisecond, "once its files may be written it writes again, profiles mlp and serves it; logs:\n%s", logs)
	r := do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(2), nil)
	require.Equal(t, 200, r.code, string(r.body))
	evs := string(do(t, "GET", base+"/api/v1/events?limit=1000", nil, nil).body)
	require.Contains(t, evs, "the database can be written again")
}
