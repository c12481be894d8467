package daemon

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/internal/dirlock"
	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/profiler/store"
)

// schemaOneDatabase writes a database at path as the first release of the
// schema left it.
func schemaOneDatabase(t *testing.T, path string) {
	t.Helper()
	ms, err := store.Migrations()
	require.NoError(t, err)
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL, description TEXT NOT NULL)`)
	require.NoError(t, err)
	_, err = db.Exec(ms[0].SQL)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO schema_version VALUES (1, 0, ?)`, ms[0].Description)
	require.NoError(t, err)
}

func TestDatabaseReport(t *testing.T) {
	ctx := context.Background()
	var shell int // the sqlite3 shell's pid, of the case that starts one
	cases := []struct {
		name  string
		make  func(t *testing.T, path string)
		check func(t *testing.T, r *DatabaseReport)
	}{
		{"none yet", func(*testing.T, string) {}, func(t *testing.T, r *DatabaseReport) {
			require.True(t, r.Missing)
		}},
		{"sound and current", func(t *testing.T, path string) {
			st, err := store.Open(ctx, path)
			require.NoError(t, err)
			_, err = st.AppendEvent(ctx, store.Event{Kind: store.EventConfigReload, Message: "x"})
			require.NoError(t, err)
			require.NoError(t, st.Close())
		}, func(t *testing.T, r *DatabaseReport) {
			require.Empty(t, r.Problem)
			require.EqualValues(t, 1, r.Summary.Events)
			require.Zero(t, r.MigratesTo)
		}},
		{"an older schema", schemaOneDatabase, func(t *testing.T, r *DatabaseReport) {
			require.Empty(t, r.Problem)
			require.Equal(t, 1, r.Summary.SchemaVersion)
			require.Equal(t, store.SchemaVersion(), r.MigratesTo)
		}},
		{"a newer schema", func(t *testing.T, path string) {
			schemaOneDatabase(t, path)
			db, err := sql.Open("sqlite3", path)
			require.NoError(t, err)
			defer db.Close()
			_, err = db.Exec(`INSERT INTO schema_version VALUES (?, 0, 'from the future')`, store.SchemaVersion()+1)
			require.NoError(t, err)
		}, func(t *testing.T, r *DatabaseReport) {
			require.Contains(t, r.Problem, "newer")
			require.Contains(t, r.Fix, "run that release again")
		}},
		{"held by a sqlite3 shell", func(t *testing.T, path string) {
			st, err := store.Open(ctx, path)
			require.NoError(t, err)
			require.NoError(t, st.Close())
			shell = testbin.HoldWriteLock(t, path)
		}, func(t *testing.T, r *DatabaseReport) {
			require.NotNil(t, r.Summary, "it is read all the same")
			require.Equal(t, "its write lock is held by pid "+strconv.Itoa(shell)+" (sqlite3)", r.Problem)
			require.Contains(t, r.Fix, "end the write transaction that process holds open")
		}},
		{"not a database", func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte("this is no database, just some words in a file"), 0o600))
		}, func(t *testing.T, r *DatabaseReport) {
			require.Equal(t, "check database: database file is corrupt: file is not a database", r.Problem, "the path is the report's, not repeated")
			require.Contains(t, r.Fix, "gpuletd restore FILE")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.make(t, filepath.Join(dir, store.FileName))
			cfg := config.Default()
			cfg.StateDir = dir
			r := databaseReport(ctx, cfg)
			require.Equal(t, filepath.Join(dir, store.FileName), r.Path)
			tc.check(t, r)
			lock, err := dirlock.Lock(dir)
			require.NoError(t, err, "the report let the state directory go")
			require.NoError(t, lock.Close())
		})
	}

	// A daemon holds the directory: the file is not read.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, store.FileName), []byte("held"), 0o600))
	lock, err := dirlock.Lock(dir)
	require.NoError(t, err)
	defer lock.Close()
	cfg := config.Default()
	cfg.StateDir = dir
	r := databaseReport(ctx, cfg)
	require.NotNil(t, r.InUse)
	require.Equal(t, " (pid "+strconv.Itoa(os.Getpid())+")", *r.InUse)
	require.Nil(t, r.Summary)
	require.Empty(t, r.Problem)
}

// What a daemon that was killed wrote last is still in SQLite's log beside
// the file: the report counts it and says how that run ended. It read the
// file alone before: it said the newest event was older than it was, and
// of a daemon killed soon after its first start that serve would refuse
// the database (which serve opens, its log and all).
func TestDatabaseReportReadsWhatAKilledDaemonLeft(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, store.FileName)
	st, err := store.Open(ctx, path)
	require.NoError(t, err)
	// Left open, as a killed daemon leaves it: its log is not folded into
	// the file.
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	e := newEvents(st, zap.NewNop())
	e.recordStart(ctx, "v1", 4121, host{bootID: "b", oomKills: -1})
	e.add(EventReorganize, store.SeverityInfo, "plan applied", nil)
	// The file alone does not have them yet, nor here even the schema: the
	// report used to say that serve would refuse it, and to move it aside.
	_, err = store.Inspect(ctx, path)
	require.ErrorIs(t, err, store.ErrNotGpuletd)

	cfg := config.Default()
	cfg.StateDir = dir
	r := databaseReport(ctx, cfg)
	require.Empty(t, r.Problem)
	require.EqualValues(t, 2, r.Summary.Events)
	require.Regexp(t, `^gpuletd v1 \(pid 4121\) started at \S+ \S+ and recorded no stop: .*, after its last event, at \S+ \S+: reorganize: plan applied \(.*\)$`, r.LastRun)
}
