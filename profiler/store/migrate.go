package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one numbered step of the schema. Once released, a migration's
// SQL never changes; a later need adds a new migration.
type Migration struct {
	// Version is the schema version the migration produces (1, 2, …).
	Version int
	// Description is the file name's words, e.g. "base schema".
	Description string
	// SQL is the statements the migration runs, in one transaction.
	SQL string
}

// schemaVersionDDL creates the table that records applied migrations. It is
// not a migration itself: it must exist before the first one runs.
const schemaVersionDDL = `CREATE TABLE IF NOT EXISTS schema_version (
	version     INTEGER PRIMARY KEY,
	applied_at  INTEGER NOT NULL, -- unix nanoseconds
	description TEXT    NOT NULL
)`

var migrationName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// loadMigrations reads the embedded migrations once.
var loadMigrations = sync.OnceValues(func() ([]Migration, error) {
	return parseMigrations(migrationFiles, "migrations")
})

// parseMigrations reads dir of fsys: files named NNNN_words.sql, numbered
// 1..N without gaps.
func parseMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("read migrations: %s: name must look like 0001_words.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migrations: %w", err)
		}
		ms = append(ms, Migration{Version: v, Description: strings.ReplaceAll(m[2], "_", " "), SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("read migrations: expected version %d, found %d", i+1, m.Version)
		}
	}
	return ms, nil
}

// Migrations returns the migrations this build knows, in order.
func Migrations() ([]Migration, error) {
	ms, err := loadMigrations()
	return append([]Migration(nil), ms...), err
}

// SchemaVersion returns the schema version this build migrates databases to.
func SchemaVersion() int {
	ms, _ := loadMigrations()
	return len(ms)
}

// Version returns the schema version of the open database.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v int
	err := s.reader().QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_version").Scan(&v)
	return v, wrap("read schema version", err)
}

// migrate brings db up to len(ms), one migration per transaction. It refuses
// a database at a version above len(ms) with ErrSchemaTooNew and changes
// nothing in it. db must be the single writer connection (transactions begin
// IMMEDIATE), so a second process opening the same file waits instead of
// applying a migration twice.
func migrate(ctx context.Context, db *sql.DB, ms []Migration, now func() time.Time, log *zap.Logger) error {
	if _, err := db.ExecContext(ctx, schemaVersionDDL); err != nil {
		return wrap("create schema_version", err)
	}
	for {
		done, err := migrateOne(ctx, db, ms, now, log)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next pending migration, if any, and reports whether
// the database is up to date.
func migrateOne(ctx context.Context, db *sql.DB, ms []Migration, now func() time.Time, log *zap.Logger) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, wrap("begin migration", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var cur int
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_version").Scan(&cur); err != nil {
		return false, wrap("read schema version", err)
	}
	switch {
	case cur > len(ms):
		return false, fmt.Errorf("check schema version: database is at version %d, this build knows up to %d: %w", cur, len(ms), ErrSchemaTooNew)
	case cur == len(ms):
		return true, wrap("commit schema check", tx.Commit())
	}
	m := ms[cur]
	op := fmt.Sprintf("apply migration %04d (%s)", m.Version, m.Description)
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return false, wrap(op, err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_version (version, applied_at, description) VALUES (?, ?, ?)",
		m.Version, now().UTC().UnixNano(), m.Description); err != nil {
		return false, wrap(op, err)
	}
	if err := tx.Commit(); err != nil {
		return false, wrap(op, err)
	}
	log.Info("applied schema migration", zap.Int("version", m.Version), zap.String("description", m.Description))
	return false, nil
}
