package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/stretchr/testify/require"
)

// TestSystemdNotifyAndReload runs the daemon as systemd would (Type=notify
// with a watchdog): it must send READY=1, STATUS= lines, WATCHDOG=1 pings
// (its health check passing auth.restricted_apis)
// and STOPPING=1 to NOTIFY_SOCKET; SIGHUP applies a valid configuration and keeps the old
// one when the new file is invalid.
func TestSystemdNotifyAndReload(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	dir := t.TempDir()
	sockPath := filepath.Join(dir, "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sockPath, Net: "unixgram"})
	require.NoError(t, err)
	defer conn.Close()
	msgs := make(chan string, 256)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, _, err := conn.ReadFromUnix(buf)
			if err != nil {
				close(msgs)
				return
			}
			msgs <- string(buf[:n])
		}
	}()

	repo := filepath.Join(dir, "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"mlp"}, 1))
	cfgPath := filepath.Join(dir, "gpuletd.yaml")
	addr := freeAddr(t)
	writeCfg := func(body string) { require.NoError(t, os.WriteFile(cfgPath, []byte(body), 0o644)) }
	// The health checks are restricted: the watchdog's own check sends the
	// header.
	writeCfg("listen: " + addr + "\nscheduler:\n  reorganize_period: 20s\nauth:\n  restricted_apis: [\"health:probe-key=p1\"]\n")

	env := daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "NOTIFY_SOCKET="+sockPath, "WATCHDOG_USEC=300000",
		"GPULETD_DEVICES=[{kind: emulated, profiles: igniter-v100, count: 1}]")
	cmd := exec.Command(testbin.Gpuletd(t), "serve", "--config", cfgPath)
	cmd.Env = env
	logs := &testbin.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()

	// expect waits for a message that contains want; one that begins with
	// want's first word (STATUS=) must then be want whole. seen keeps every
	// message read.
	var seen []string
	expect := func(want string) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for {
			select {
			case m, ok := <-msgs:
				require.True(t, ok)
				seen = append(seen, m)
				if strings.Contains(m, want) {
					if strings.HasPrefix(want, "STATUS=") {
						require.Equal(t, want, m)
					}
					return
				}
			case <-deadline:
				t.Fatalf("no %s from the daemon; logs:\n%s", want, logs)
			}
		}
	}
	// systemctl status shows what the daemon waits for while it starts,
	// then what it serves.
	expect("STATUS=waiting for mlp (profiling or placing); 0 of 1 models serve")
	// A start may profile for minutes: it asks systemd for more time than
	// TimeoutStartSec= until it is ready, and then no more.
	expect("EXTEND_TIMEOUT_USEC=30000000")
	expect("READY=1")
	expect("STATUS=ready: 1 model on 1 gpu-let of 1 device")
	expect("WATCHDOG=1")
	expect("WATCHDOG=1")
	require.Equal(t, http.StatusForbidden, do(t, "GET", "http://"+addr+"/v2/health/live", nil, nil).code, "restricted")
	require.Equal(t, http.StatusOK, do(t, "GET", "http://"+addr+"/v2/health/live", nil, map[string]string{"probe-key": "p1"}).code)
	ready := slices.Index(seen, "READY=1")
	for _, m := range seen[ready:] {
		require.NotContains(t, m, "EXTEND_TIMEOUT_USEC", "asked for more time once ready: %q", seen)
	}

	events := func() []map[string]any {
		resp, err := http.Get("http://" + addr + "/api/v1/events?limit=1000")
		require.NoError(t, err)
		defer resp.Body.Close()
		var evs []map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&evs))
		return evs
	}
	lastReload := func() map[string]any {
		var last map[string]any
		for _, e := range events() {
			if e["kind"] == "config_reload" {
				last = e
			}
		}
		return last
	}

	// A valid file: the period and the lifted restriction apply live, the
	// listener needs a restart.
	writeCfg("listen: 127.0.0.1:1\nscheduler:\n  reorganize_period: 5s\n")
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	expect("RELOADING=1")
	expect("READY=1")
	require.Eventually(t, func() bool { return lastReload() != nil }, 10*time.Second, 50*time.Millisecond)
	ev := lastReload()
	require.Contains(t, ev["message"], "2 change(s) applied")
	require.Contains(t, ev["message"], "listen")
	require.Contains(t, ev["attrs"].(map[string]any)["applied"], "scheduler.reorganize_period")
	require.Contains(t, ev["attrs"].(map[string]any)["applied"], "auth.restricted_apis")

	// An invalid file: refused, the old configuration stays, serving goes on.
	writeCfg("scheduler:\n  policy: fastest\n")
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	require.Eventually(t, func() bool {
		e := lastReload()
		return e != nil && strings.Contains(e["message"].(string), "not reloaded")
	}, 10*time.Second, 50*time.Millisecond)
	require.Contains(t, lastReload()["message"], `scheduler.policy: "fastest"`)
	resp, err := http.Get("http://" + addr + "/v2/health/ready")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	expect("STOPPING=1")
	select {
	case err := <-done:
		require.NoError(t, err, "clean exit on SIGTERM; logs:\n%s", logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("daemon did not exit; logs:\n%s", logs)
	}
}
