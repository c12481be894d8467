package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/gpulet/gpuletd/profiler/store"
)

// setFileSizeLimit sets a running process's soft limit on the size of the
// files it writes: at a few KiB every SQLite write fails as on a full disk.
func setFileSizeLimit(t *testing.T, pid int, bytes uint64) {
	t.Helper()
	require.NoError(t, unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: bytes, Max: unix.RLIM_INFINITY}, nil))
}

type storeDoc struct {
	Store struct {
		Writable bool   `json:"writable"`
		Reason   string `json:"reason"`
	} `json:"store"`
}

// TestFullDiskServesReadOnly starts the daemon on a database its disk cannot
// add a byte to (and that holds an events row breaking the table's
// constraints): it serves from what is stored and says it is read-only in
// status, events and metrics; when the disk takes writes again it saves
// what it owes; when the disk fills while it runs, a re-plan says that the
// plan was not saved.
func TestFullDiskServesReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	prlimit, err := exec.LookPath("prlimit")
	require.NoError(t, err, "prlimit (util-linux) starts the daemon with a file size limit; make test-deps installs it")
	_, env := emulatedMLP(t) // the store, not timing, is under test
	var state string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GPULETD_STATE_DIR="); ok {
			state = v
		}
	}
	dbPath := filepath.Join(state, "gpuletd.db")
	st, err := store.Open(context.Background(), dbPath)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	db, err := sql.Open("sqlite3", dbPath)
	require.NoError(t, err)
	_, err = db.Exec("PRAGMA ignore_check_constraints = 1")
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO events (at, kind, severity, message) VALUES (1, 'x', 'fatal', 'a bad row')`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	addr, logs, pid := startDaemonUnder(t, env, prlimit, "--fsize=4096:unlimited")
	base := "http://" + addr
	require.Eventually(t, func() bool { return do(t, "GET", base+"/v2/health/ready", nil, nil).code == 200 },
		60*time.Second, 100*time.Millisecond, "it serves although nothing can be written; logs:\n%s", logs)
	r := do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(1), nil)
	require.Equal(t, 200, r.code, string(r.body))
	var sd storeDoc
	require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/status", nil, nil).body, &sd))
	require.False(t, sd.Store.Writable)
	require.Contains(t, sd.Store.Reason, "read-only")
	require.Contains(t, string(do(t, "GET", base+"/metrics", nil, nil).body), "gpuletd_store_writable 0")
	re := do(t, "POST", base+"/api/v1/reorganize", nil, nil)
	require.Equal(t, 200, re.code, string(re.body))
	require.Contains(t, string(re.body), `"saved":false`)
	require.Eventually(t, func() bool {
		return strings.Contains(string(do(t, "GET", base+"/api/v1/events?limit=1000", nil, nil).body), `"unsaved":true`)
	}, 10*time.Second, 100*time.Millisecond, "events are kept in memory and listed")

	setFileSizeLimit(t, pid, unix.RLIM_INFINITY)
	require.Eventually(t, func() bool {
		require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/status", nil, nil).body, &sd))
		return sd.Store.Writable
	}, 20*time.Second, 200*time.Millisecond, "it recovers once the disk takes writes; logs:\n%s", logs)
	evs := string(do(t, "GET", base+"/api/v1/events?limit=1000", nil, nil).body)
	require.NotContains(t, evs, `"unsaved":true`, "the events kept in memory are saved")
	require.Contains(t, evs, "the database can be written again")
	require.Contains(t, evs, "the database cannot be written")
	db, err = sql.Open("sqlite3", "file:"+dbPath+"?mode=ro")
	require.NoError(t, err)
	var plans, quarantined int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM plans").Scan(&plans))
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM events_quarantine").Scan(&quarantined))
	require.NoError(t, db.Close())
	require.Positive(t, plans, "the plan in force is saved")
	require.Equal(t, 1, quarantined, "the bad events row is set aside")

	setFileSizeLimit(t, pid, 4096)
	re = do(t, "POST", base+"/api/v1/reorganize", nil, nil)
	require.Equal(t, 200, re.code, string(re.body))
	require.Contains(t, string(re.body), `"saved":false`, "a plan not saved while running is said so")
	require.Contains(t, string(do(t, "GET", base+"/metrics", nil, nil).body), "gpuletd_store_writable 0")
	setFileSizeLimit(t, pid, unix.RLIM_INFINITY)
	require.Eventually(t, func() bool {
		require.NoError(t, json.Unmarshal(do(t, "GET", base+"/api/v1/status", nil, nil).body, &sd))
		return sd.Store.Writable
	}, 20*time.Second, 200*time.Millisecond, "logs:\n%s", logs)
	require.Equal(t, 200, do(t, "POST", base+"/v2/models/mlp/infer", mlpJSON(1), nil).code)
}
