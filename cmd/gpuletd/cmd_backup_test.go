package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/stretchr/testify/require"
)

// The backup call carries the admin token, which a daemon off loopback
// asks for, and a refusal reaches the operator with the daemon's words.
func TestFetchBackupSendsTheToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/backup" || r.Header.Get("Authorization") != "Bearer t0k" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error": "send Authorization: Bearer <auth.admin_token>"}`))
			return
		}
		_, _ = w.Write([]byte("SQLite format 3\x00"))
	}))
	defer srv.Close()
	d := plainAPI(srv.URL)

	got, err := fetchBackup(context.Background(), d, "t0k")
	require.NoError(t, err)
	require.Equal(t, "SQLite format 3\x00", string(got))

	_, err = fetchBackup(context.Background(), d, "")
	err = d.fail(err)
	require.EqualError(t, err, "gpuletd: the daemon at "+srv.URL+" answered 401 Unauthorized: send Authorization: Bearer <auth.admin_token>")
}

// --keep removes this host's oldest backups in the folder, and nothing
// else there.
func TestPruneBackups(t *testing.T) {
	dir := t.TempDir()
	ours := func(stamp string) string { return daemon.BackupFilePrefix() + stamp + ".db" }
	names := []string{
		ours("20261101T031500Z"), ours("20261102T031500Z"), ours("20261103T031500Z"), ours("20261104T031500Z"),
		"gpuletd-otherhost-20261101T031500Z.db", "notes.txt", ours("20261101T031500Z") + ".tmp",
	}
	for _, n := range names {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o600))
	}
	removed, err := pruneBackups(dir, 2)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, names[0]), filepath.Join(dir, names[1])}, removed)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range left {
		got = append(got, e.Name())
	}
	require.ElementsMatch(t, names[2:], got)

	removed, err = pruneBackups(dir, 5)
	require.NoError(t, err)
	require.Empty(t, removed, "fewer than kept: none goes")
}

// A gpuletd of a release before the backup call answers 404: the database
// it serves from is copied directly (a backup before an upgrade's restart).
func TestBackupFromAnOlderDaemon(t *testing.T) {
	clearGpuletdEnv(t)
	older := httptest.NewServer(http.NotFoundHandler())
	defer older.Close()
	state := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(state, store.FileName))
	require.NoError(t, err)
	_, err = st.AppendEvent(context.Background(), store.Event{Kind: store.EventConfigReload, Message: "x"})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	t.Setenv("GPULETD_LISTEN", strings.TrimPrefix(older.URL, "http://"))
	t.Setenv("GPULETD_STATE_DIR", state)
	out := filepath.Join(t.TempDir(), "b.db")

	code, stdout, stderr := runCLI(t, "backup", out)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "the gpuletd at "+older.URL+" has no backup call (a release before it): copying "+filepath.Join(state, store.FileName)+" directly\n", stderr)
	require.Contains(t, stdout, ", 1 event (the newest at ")
	for _, p := range store.Files(filepath.Join(state, store.FileName))[1:] {
		require.NoFileExists(t, p)
	}

	// With --url the operator named the daemon: its 404 is the answer.
	code, _, stderr = runCLI(t, "backup", "--url", older.URL, filepath.Join(t.TempDir(), "c.db"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "404")
}
