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
	"github.com/gpulet/gpuletd/internal/testcert"
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
// be stored, and serves it, without a restart. A model whose configuration
// it may not read says so, and how to let it.
func TestStoreItsUserMayNotWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	u := newOtherUser(t)
	repo := filepath.Join(u.shared(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"mlp", "lenet5"}, 1))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "mlp", "config.yaml"), []byte("slo: 200ms\nmax_batch_size: 8\n"), 0o644))
	// lenet5's configuration is root's alone (or no one's).
	unreadable := filepath.Join(repo, "lenet5", "config.yaml")
	require.NoError(t, os.Chmod(unreadable, 0o600))
	if !u.root {
		require.NoError(t, os.Chmod(unreadable, 0o000))
	}
	state := filepath.Join(u.shared(), "state")
	require.NoError(t, os.Mkdir(state, 0o755))
	dbPath := filepath.Join(state, "gpuletd.db")
	st, err := store.Open(context.Background(), dbPath)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	says, fix := "chmod -R u+w "+state, []string{"chmod", "-R", "u+w", state}
	if u.root {
		// The folder is the daemon's user's (install.sh makes it so), the
		// database root's.
		require.NoError(t, os.Chown(state, 65534, 65534))
		says = "belongs to root:root and gpuletd runs as nobody (uid 65534)"
		fix = []string{"chown", "-R", "65534:65534", state}
	} else {
		require.NoError(t, os.Chmod(dbPath, 0o444))
	}
	t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", state).Run() })

	env := daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_ONNXRUNTIME_LIBRARY="+u.lib,
		"GPULETD_STATE_DIR="+state, "GPULETD_RUNTIME_DIR="+filepath.Join(state, "run"))
	addr, logs, _ := startDaemonUnder(t, env, u.wrapper...)
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
	var mlp struct {
		Ready  bool
		Reason string
	}
	read := func() {
		require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/status", nil, nil).body, &sd))
		for _, m := range sd.Models {
			if m.Name == "mlp" {
				mlp.Ready, mlp.Reason = m.Ready, m.Reason
			}
		}
	}
	require.Eventually(t, func() bool {
		read()
		return strings.Contains(mlp.Reason, "profiling on cpu failed")
	}, time.Minute, 200*time.Millisecond, "logs:\n%s", logs)
	require.False(t, sd.Store.Writable)
	require.Contains(t, sd.Store.Reason, says)
	require.Contains(t, sd.Store.Reason, "let the daemon's user write its files")
	require.Contains(t, mlp.Reason, says, "the model says why it is not served")
	require.False(t, mlp.Ready)
	lenet5 := string(do(t, "GET", base+"/v2/models/lenet5", nil, nil).body)
	require.Contains(t, lenet5, unreadable+": permission denied: not readable by this user: ", "a file it may not read is not called broken alone")
	require.Contains(t, lenet5, "chmod g+r "+unreadable)
	require.Contains(t, string(do(t, "GET", base+"/metrics", nil, nil).body), "gpuletd_store_writable 0")

	out, err := exec.Command(fix[0], fix[1:]...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Eventually(t, func() bool {
		read()
		return sd.Store.Writable && mlp.Ready
	}, time.Minute, 200*time.Millisecond, "once its files may be written it writes again, profiles mlp and serves it; logs:\n%s", logs)
	r := do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(2), nil)
	require.Equal(t, 200, r.code, string(r.body))
	evs := string(do(t, "GET", base+"/api/v1/events?limit=1000", nil, nil).body)
	require.Contains(t, evs, "the database can be written again")
}

// otherUser runs gpuletd as a user that file permissions bind: nobody
// (through setpriv) when the tests run as root, else the tests' own user.
type otherUser struct {
	t       *testing.T
	root    bool     // the tests run as root: gpuletd runs as nobody (uid 65534)
	wrapper []string // the command that runs gpuletd as that user
	lib     string   // ONNX Runtime where that user may read it
}

func newOtherUser(t *testing.T) *otherUser {
	t.Helper()
	u := &otherUser{t: t, root: os.Geteuid() == 0}
	if u.root {
		setpriv, err := exec.LookPath("setpriv")
		require.NoError(t, err, "setpriv (util-linux) runs the daemon as nobody; make test-deps installs it")
		u.wrapper = []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}
		// nobody must reach the binary and the library (the checkout
		// may lie in root's home).
		require.NoError(t, os.Chmod(filepath.Dir(testbin.Gpuletd(t)), 0o755))
	}
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	u.lib = filepath.Join(u.shared(), onnxrt.LibraryName)
	copyFile(t, lib, u.lib)
	return u
}

// shared is a new temporary folder the other user may enter.
func (u *otherUser) shared() string {
	d := u.t.TempDir()
	require.NoError(u.t, os.Chmod(d, 0o755))
	require.NoError(u.t, os.Chmod(filepath.Dir(d), 0o755))
	return d
}

// TestFoldersItsUserMayNotUse: a runtime_dir the daemon's user may not
// write (where the executors' sockets go) stops it at once with whose
// folder it is and what to run, instead of a daemon that starts and then
// fails to start every executor; one it may not make names the parent; a
// model repository it may not read is not said to be missing; a
// configuration file or TLS key it may not read says how to let it.
func TestFoldersItsUserMayNotUse(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	u := newOtherUser(t)
	repo := filepath.Join(u.shared(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"mlp"}, 1))
	state := filepath.Join(u.shared(), "state")
	require.NoError(t, os.Mkdir(state, 0o755))
	if u.root {
		require.NoError(t, os.Chown(state, 65534, 65534))
	}
	runtime := filepath.Join(u.shared(), "run")
	require.NoError(t, os.Mkdir(runtime, 0o755))
	says := "chmod -R u+w " + runtime
	if u.root {
		says = runtime + " belongs to root:root and gpuletd runs as nobody (uid 65534), which may not write it: chown -R nobody:nogroup " + runtime
	} else {
		require.NoError(t, os.Chmod(runtime, 0o555))
		t.Cleanup(func() { _ = os.Chmod(runtime, 0o755) })
	}
	code, out := u.serveOnce(repo, state, runtime)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "runtime_dir "+runtime+": not writable by this user: ")
	require.Contains(t, out, says)
	require.Contains(t, out, "or point runtime_dir (GPULETD_RUNTIME_DIR) at a folder this user may write")

	code, out = u.serveOnce(repo, state, filepath.Join(runtime, "sub"))
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "which may not make "+filepath.Join(runtime, "sub")+" in it")

	require.NoError(t, os.Chmod(repo, 0o700))
	if !u.root {
		require.NoError(t, os.Chmod(repo, 0o000))
	}
	t.Cleanup(func() { _ = os.Chmod(repo, 0o755) })
	code, out = u.serveOnce(repo, state, filepath.Join(state, "run"))
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "model repository "+repo+": permission denied: the user gpuletd runs as")
	require.NotContains(t, out, "does not exist")

	// A configuration file root keeps to itself (it holds the admin
	// token, say) stops the service with the commands that let it read.
	conf := filepath.Join(u.shared(), "gpuletd.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("auth:\n  admin_token: secret\n"), 0o600))
	if !u.root {
		require.NoError(t, os.Chmod(conf, 0o000))
	}
	code, out = u.serveOnce(repo, state, filepath.Join(state, "run"), "--config", conf)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, conf+": permission denied: not readable by this user: ")
	require.Contains(t, out, "chmod g+r "+conf)

	// So does a TLS key only root may read (certbot's are).
	require.NoError(t, os.Chmod(repo, 0o755))
	tlsDir := u.shared()
	cert, key := filepath.Join(tlsDir, "cert.pem"), filepath.Join(tlsDir, "key.pem")
	testcert.Issue(t, testcert.Options{}).Write(t, cert, key)
	require.NoError(t, os.Chmod(cert, 0o644))
	require.NoError(t, os.Chmod(key, 0o600))
	if !u.root {
		require.NoError(t, os.Chmod(key, 0o000))
	}
	code, out = u.serveOnce(repo, state, filepath.Join(state, "run"), "--config", writeConfig(t, u.shared(),
		"tls:\n  cert_file: "+cert+"\n  key_file: "+key+"\n"))
	require.Equal(t, 1, code, out)
	require.Contains(t, out, key+": permission denied: not readable by this user: ")
	require.Contains(t, out, "chmod g+r "+key)
}

// writeConfig writes body as gpuletd.yaml in dir, readable by all.
func writeConfig(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "gpuletd.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}

// serveOnce runs gpuletd serve (with args) as the other user until it
// exits.
func (u *otherUser) serveOnce(repo, state, runtimeDir string, args ...string) (int, string) {
	env := daemonEnv(u.t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_ONNXRUNTIME_LIBRARY="+u.lib,
		"GPULETD_STATE_DIR="+state, "GPULETD_RUNTIME_DIR="+runtimeDir, "GPULETD_LISTEN=127.0.0.1:0")
	argv := append(append(append([]string(nil), u.wrapper...), testbin.Gpuletd(u.t), "serve"), args...)
	return runOnce(u.t, argv[0], state, env, argv[1:]...)
}

// TestRootOverTheServicesState: `sudo gpuletd serve` over a state folder
// that belongs to another user (the service's) serves, and warns that what
// it makes there will be root's, with both ways out.
func TestRootOverTheServicesState(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED: the warning is for root; run as root (as CI does) to check it")
	}
	state := t.TempDir()
	require.NoError(t, os.Chown(state, 65534, 65534))
	repo := t.TempDir()
	_, logs := startDaemon(t, daemonEnv(t, "GPULETD_STATE_DIR="+state, "GPULETD_RUNTIME_DIR="+filepath.Join(t.TempDir(), "run"), "GPULETD_MODEL_REPOSITORY="+repo))
	require.Contains(t, logs.String(), "running as root over state_dir "+state+", which belongs to nobody")
	require.Contains(t, logs.String(), "sudo -u nobody gpuletd serve")
}
