package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

func TestParseMigrations(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    []Migration
		wantErr string
	}{
		{
			name:  "ordered by number",
			files: fstest.MapFS{"m/0002_add_index.sql": file("B"), "m/0001_base_schema.sql": file("A")},
			want:  []Migration{{1, "base schema", "A"}, {2, "add index", "B"}},
		},
		{
			name:    "gap",
			files:   fstest.MapFS{"m/0001_a.sql": file("A"), "m/0003_c.sql": file("C")},
			wantErr: "expected version 2, found 3",
		},
		{
			name:    "not starting at one",
			files:   fstest.MapFS{"m/0002_b.sql": file("B")},
			wantErr: "expected version 1, found 2",
		},
		{
			name:    "bad name",
			files:   fstest.MapFS{"m/1_a.sql": file("A")},
			wantErr: "name must look like",
		},
		{
			name:    "stray file",
			files:   fstest.MapFS{"m/0001_a.sql": file("A"), "m/README": file("x")},
			wantErr: "README",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMigrations(tt.files, "m")
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestEmbeddedMigrations(t *testing.T) {
	ms, err := Migrations()
	require.NoError(t, err)
	require.Equal(t, len(ms), SchemaVersion())
	require.GreaterOrEqual(t, len(ms), 2)
	for i, m := range ms {
		require.Equal(t, i+1, m.Version)
		require.NotEmpty(t, m.SQL)
	}
}

func TestSchemaTooNewIsRefusedAndLeftAlone(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuletd.db")
	s, err := Open(ctx, path)
	require.NoError(t, err)
	newer := SchemaVersion() + 3
	_, err = s.w.ExecContext(ctx, `INSERT INTO schema_version VALUES (?, 1, 'from the future')`, newer)
	require.NoError(t, err)
	_, err = s.w.ExecContext(ctx, `CREATE TABLE future_thing (x INTEGER)`)
	require.NoError(t, err)
	before := dumpDatabase(t, s.reader(), "")
	require.NoError(t, s.Close())

	s, err = Open(ctx, path)
	require.Nil(t, s)
	require.ErrorIs(t, err, ErrSchemaTooNew)
	require.ErrorContains(t, err, path)
	require.ErrorContains(t, err, "version")

	raw, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer raw.Close()
	require.Equal(t, before, dumpDatabase(t, raw, ""), "a newer database must not be touched")
}

func TestFailingMigrationRollsBack(t *testing.T) {
	ctx := context.Background()
	ms := []Migration{
		{1, "one", "CREATE TABLE a (x INTEGER);"},
		{2, "two", "CREATE TABLE b (x INTEGER); INSERT INTO a VALUES (1); CREATE TABLE broken (;"},
	}
	db := sql.OpenDB(newConnector(filepath.Join(t.TempDir(), "m.db"), connWriter, time.Second, 0))
	defer db.Close()
	db.SetMaxOpenConns(1)

	err := migrate(ctx, db, ms, time.Now, zap.NewNop())
	require.ErrorContains(t, err, "apply migration 0002 (two)")

	var v int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_version`).Scan(&v))
	require.Equal(t, 1, v, "migration 1 stays applied")
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'b'`).Scan(&n))
	require.Zero(t, n, "half of migration 2 must not remain")
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM a`).Scan(&n))
	require.Zero(t, n)

	ms[1].SQL = "CREATE TABLE b (x INTEGER);"
	require.NoError(t, migrate(ctx, db, ms, time.Now, zap.NewNop()))
	require.NoError(t, db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_version`).Scan(&v))
	require.Equal(t, 2, v)
}

// TestConcurrentOpenMigratesOnce opens one new file from several stores at
// once, as a daemon and a profile command might, and checks each migration
// was applied exactly once.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuletd.db")
	const n = 4
	stores := make([]*Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = Open(ctx, path) })
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		defer func() { require.NoError(t, stores[i].Close()) }()
	}
	rows, err := queryAll(ctx, stores[0].reader(), "versions", func(r *sql.Rows) (int, error) {
		var v int
		return v, r.Scan(&v)
	}, `SELECT version FROM schema_version ORDER BY version`)
	require.NoError(t, err)
	want := make([]int, SchemaVersion())
	for i := range want {
		want[i] = i + 1
	}
	require.Equal(t, want, rows)
}
