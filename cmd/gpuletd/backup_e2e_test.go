package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/profiler/store"
)

// eventIDs maps the daemon's event IDs to their messages.
func eventIDs(t *testing.T, base string) map[int64]string {
	t.Helper()
	var evs []struct {
		ID      int64  `json:"id"`
		Message string `json:"message"`
	}
	require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/events?limit=1000", nil, nil).body, &evs))
	out := map[int64]string{}
	for _, e := range evs {
		out[e.ID] = e.Message
	}
	return out
}

// envValue is the value env gives key.
func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// A backup taken from a serving daemon, restored into another state
// directory, is what a daemon started there serves from: its events (and
// profiles, plans) are there. Restore refuses while a daemon holds the
// directory, and backup without a daemon copies the database at rest
// without leaving SQLite's files behind.
func TestBackupAndRestore(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	env, addr, logs, pid := readyMLPDaemon(t)
	base := "http://" + addr
	before := eventIDs(t, base)
	require.NotEmpty(t, before)
	bin, dir := testbin.Gpuletd(t), t.TempDir()
	cli := append(env, "GPULETD_LISTEN="+addr)

	code, out := runOnce(t, bin, dir, cli, "backup", "b.db")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `^b\.db: [\d.]+ KiB; schema `+strconv.Itoa(store.SchemaVersion())+`; 1 model, \d+ device types?, \d+ latency points, \d+ plans?, \d+ events \(the newest at `, out)
	require.Contains(t, logs.String(), "database backed up")

	summary := out
	code, out = runOnce(t, bin, dir, cli, "restore", "--check", "b.db")
	require.Equal(t, 0, code, out)
	require.Equal(t, summary, out, "checked later, the file says what it said when written")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "junk.db"), []byte("not a database, whatever its name"), 0o600))
	code, out = runOnce(t, bin, dir, cli, "restore", "--check", "junk.db")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "database file is corrupt")

	code, out = runOnce(t, bin, dir, cli, "backup", "b.db")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "b.db exists: give --force to replace it")
	code, out = runOnce(t, bin, dir, cli, "backup", "--keep", "3", "c.db")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "--keep needs a folder to write into, not a file: c.db")
	code, out = runOnce(t, bin, dir, cli, "backup", "nightly/")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "folder nightly/ does not exist: make it first (mkdir -p nightly/)")
	folder := filepath.Join(dir, "nightly")
	require.NoError(t, os.Mkdir(folder, 0o750))
	code, out = runOnce(t, bin, dir, cli, "backup", "--keep", "3", "nightly")
	require.Equal(t, 0, code, out)
	require.Regexp(t, `^nightly/gpuletd-.+-\d{8}T\d{6}Z\.db: `, out)
	live := filepath.Join(envValue(env, "GPULETD_STATE_DIR"), store.FileName)
	code, out = runOnce(t, bin, dir, cli, "backup", "--force", live)
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "is the daemon's own database")

	code, out = runOnce(t, bin, dir, cli, "restore", "b.db")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "a gpuletd serves from state_dir "+envValue(env, "GPULETD_STATE_DIR")+" (pid "+strconv.Itoa(pid)+"): stop it first")

	// Restored on another node's state directory: the daemon there serves
	// from what the first had.
	other := t.TempDir()
	otherEnv := append(append([]string(nil), env...), "GPULETD_STATE_DIR="+other, "GPULETD_RUNTIME_DIR="+filepath.Join(other, "run"))
	code, out = runOnce(t, bin, dir, otherEnv, "restore", "b.db")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "restored b.db into "+filepath.Join(other, store.FileName)+": ")
	require.NotContains(t, out, "the database it replaced", "there was none")

	// Another node's backup without its history.
	third := t.TempDir()
	code, out = runOnce(t, bin, dir, append(append([]string(nil), env...), "GPULETD_STATE_DIR="+third), "restore", "--without-history", "b.db")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "1 model, ")
	require.Contains(t, out, ", 0 plans, 0 events\n")

	// Without a daemon: the database at rest, and nothing left beside it.
	code, out = runOnce(t, bin, dir, append(otherEnv, "GPULETD_LISTEN="+freeAddr(t)), "backup", "rest.db")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "copying "+filepath.Join(other, store.FileName)+" directly")
	for _, p := range store.Files(filepath.Join(other, store.FileName))[1:] {
		require.NoFileExists(t, p)
	}

	addr2, logs2 := startDaemon(t, otherEnv)
	base2 := "http://" + addr2
	require.Eventually(t, func() bool { return do(t, "GET", base2+"/v2/health/ready", nil, nil).code == 200 },
		60*time.Second, 100*time.Millisecond, "logs:\n%s", logs2)
	after := eventIDs(t, base2)
	for id, msg := range before {
		require.Equal(t, msg, after[id], "event %d of the first daemon is in the restored database", id)
	}
	_, err := os.Stat(filepath.Join(dir, "rest.db"))
	require.NoError(t, err)
}
