package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ErrNotGpuletd reports a sound SQLite database that gpuletd did not write.
var ErrNotGpuletd = errors.New("not a gpuletd database")

// Summary is what a gpuletd database file holds, as Inspect counts it.
type Summary struct {
	// SchemaVersion is the version its migrations reached.
	SchemaVersion int `json:"schema_version"`
	// Rows of its main tables.
	Models        int64 `json:"models"`
	DeviceTypes   int64 `json:"device_types"`
	LatencyPoints int64 `json:"latency_points"`
	Plans         int64 `json:"plans"`
	Events        int64 `json:"events"`
	// LastEvent is when its newest event was written: about when the
	// daemon that wrote it last ran. Zero without events.
	LastEvent time.Time `json:"last_event,omitzero"`
	// Memory is, per device type, how many of its models' memory was
	// measured (ModelMemory) and what they need together, one copy each
	// (schema 3 on; none before): from schema 5, each model's own memory
	// and one executor's.
	Memory []TypeMemory `json:"memory,omitempty"`
	// Bytes is the file's size.
	Bytes int64 `json:"bytes"`
}

// TypeMemory is the measured memory of a database's models on one device
// type.
type TypeMemory struct {
	DeviceType string  `json:"device_type"`
	Models     int64   `json:"models"`
	MB         float64 `json:"mb"`
	// WithExecutor is how many of them were measured before schema 5 told
	// the executor's own memory apart (ModelMemory.ExecutorMB 0): each
	// counts it until it is profiled again.
	WithExecutor int64 `json:"with_executor,omitempty"`
}

// Inspect reads the database file at path without changing anything (it
// takes no lock and writes no journal), checks its pages as Open does and
// counts what it holds. A file that is not a sound SQLite database is
// ErrCorrupt (bad events rows aside, which Open quarantines; SQLite checks
// no CHECK constraint of a file it opens read-only, so those are left to
// Open), a database gpuletd did not write ErrNotGpuletd, one a newer
// gpuletd migrated ErrSchemaTooNew (with its summary). It is meant for a
// file at rest, a backup: it reads the main file alone, not a write-ahead
// log beside it.
func Inspect(ctx context.Context, path string) (Summary, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Summary{}, fmt.Errorf("inspect %s: %w", path, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return Summary{}, fmt.Errorf("inspect %s: %w", abs, err)
	}
	if !fi.Mode().IsRegular() {
		return Summary{}, fmt.Errorf("inspect %s: %w: not a regular file", abs, ErrCorrupt)
	}
	db := sql.OpenDB(newConnector(abs, connImmutable, DefaultBusyTimeout, 0))
	defer db.Close()
	sum, err := summarize(ctx, db)
	sum.Bytes = fi.Size()
	if err != nil {
		return sum, fmt.Errorf("inspect %s: %w", abs, err)
	}
	return sum, nil
}

// Summary is Inspect of an open store: it counts what the store's reader
// sees, the write-ahead log's pages included (what a daemon that was
// killed wrote last is there until the log is checkpointed), and gives the
// main file's size.
func (s *Store) Summary(ctx context.Context) (Summary, error) {
	sum, err := summarize(ctx, s.reader())
	if fi, serr := os.Stat(s.path); serr == nil {
		sum.Bytes = fi.Size()
	}
	if err != nil {
		return sum, fmt.Errorf("inspect %s: %w", s.path, err)
	}
	return sum, nil
}

// summarize checks db and counts its rows.
func summarize(ctx context.Context, db *sql.DB) (Summary, error) {
	var sum Summary
	problems, err := quickCheck(ctx, db)
	if err != nil {
		return sum, err
	}
	if err := corruption(problems); err != nil {
		return sum, err
	}

	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'`).Scan(&tables); err != nil {
		return sum, wrap("read schema", err)
	}
	if tables == 0 {
		return sum, fmt.Errorf("%w: it has no schema_version table", ErrNotGpuletd)
	}
	if err := db.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_version").Scan(&sum.SchemaVersion); err != nil {
		return sum, wrap("read schema version", err)
	}
	if sum.SchemaVersion > SchemaVersion() {
		return sum, fmt.Errorf("%w: version %d, this gpuletd knows up to %d", ErrSchemaTooNew, sum.SchemaVersion, SchemaVersion())
	}
	if sum.SchemaVersion == 0 {
		return sum, fmt.Errorf("%w: no migration was ever applied to it", ErrNotGpuletd)
	}
	// Every table counted here is in the base schema (version 1).
	counts := []struct {
		table string
		n     *int64
	}{
		{"models", &sum.Models},
		{"device_types", &sum.DeviceTypes},
		{"latency_profiles", &sum.LatencyPoints},
		{"plans", &sum.Plans},
		{"events", &sum.Events},
	}
	for _, c := range counts {
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+c.table).Scan(c.n); err != nil {
			return sum, wrap("count "+c.table, err)
		}
	}
	if sum.SchemaVersion >= 3 {
		// From version 5 each model's own memory, and one executor's.
		total, with := "SUM(resident_mb)", "count(*)"
		if sum.SchemaVersion >= 5 {
			total, with = "SUM(resident_mb - executor_mb) + MAX(executor_mb)", "SUM(executor_mb = 0)"
		}
		mem, err := queryAll(ctx, db, "sum the models' memory", func(r *sql.Rows) (TypeMemory, error) {
			var m TypeMemory
			return m, r.Scan(&m.DeviceType, &m.Models, &m.MB, &m.WithExecutor)
		}, `SELECT device_type, count(*), `+total+`, `+with+` FROM model_memory
WHERE model_sha IN (SELECT sha256 FROM models) GROUP BY device_type ORDER BY device_type`)
		if err != nil {
			return sum, err
		}
		sum.Memory = mem
	}
	var last sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT MAX(at) FROM events").Scan(&last); err != nil {
		return sum, wrap("read the newest event", err)
	}
	if last.Valid {
		sum.LastEvent = time.Unix(0, last.Int64).UTC()
	}
	return sum, nil
}
