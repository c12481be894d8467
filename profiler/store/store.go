package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Store is an open gpuletd database. It is safe for concurrent use; Close it
// when done.
type Store struct {
	path string
	w    *sql.DB // exactly one connection: every write is serialised here
	r    *sql.DB // read-only connections
	now  func() time.Time
	log  *zap.Logger
}

// Open opens (creating it and its parent directory when missing) the database
// at path, checks it, and applies pending migrations. A database written by a
// newer gpuletd fails with ErrSchemaTooNew; a file that is not a sound SQLite
// database fails with ErrCorrupt. Errors name the path.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if path == "" {
		return nil, fmt.Errorf("open store: %w: empty path", ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o750); err != nil {
		return nil, fmt.Errorf("open store %s: create directory: %w", abs, err)
	}
	s := &Store{path: abs, now: cfg.now, log: cfg.log.With(zap.String("path", abs))}

	s.w = sql.OpenDB(newConnector(abs, false, cfg.busyTimeout, cfg.maxPageCount))
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)
	if err := retryBusy(ctx, cfg.busyTimeout, func() error { return s.initWriter(ctx, cfg.quickCheck) }); err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", abs, err), s.w.Close())
	}

	s.r = sql.OpenDB(newConnector(abs, true, cfg.busyTimeout, 0))
	s.r.SetMaxOpenConns(cfg.readers)
	s.r.SetMaxIdleConns(cfg.readers)
	if err := s.r.PingContext(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", abs, wrap("open readers", err)), s.r.Close(), s.w.Close())
	}
	return s, nil
}

// initWriter connects the writer, optionally checks the file, and migrates.
func (s *Store) initWriter(ctx context.Context, quickCheck bool) error {
	if err := s.w.PingContext(ctx); err != nil {
		return wrap("connect", err)
	}
	if quickCheck {
		if err := s.quickCheck(ctx); err != nil {
			return err
		}
	}
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	return migrate(ctx, s.w, ms, s.now, s.log)
}

// quickCheck runs PRAGMA quick_check and turns any complaint into ErrCorrupt.
func (s *Store) quickCheck(ctx context.Context) error {
	rows, err := s.w.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return wrap("check database", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return wrap("check database", err)
		}
		if line != "ok" && len(problems) < 5 {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return wrap("check database", err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("check database: %w: %s", ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the reader pool and then the writer. It waits for queries in
// progress to finish.
func (s *Store) Close() error {
	var errs []error
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store %s: %w", s.path, err)
	}
	return nil
}

// write runs fn in one IMMEDIATE transaction on the writer connection and
// commits it; any error rolls the whole transaction back and is wrapped with
// op.
func (s *Store) write(ctx context.Context, op string, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap(op, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return wrap(op, err)
	}
	return wrap(op, tx.Commit())
}

// stamp returns t in UTC, or the store's clock when t is zero.
func (s *Store) stamp(t time.Time) time.Time {
	if t.IsZero() {
		return s.now().UTC()
	}
	return t.UTC()
}

// retryBusy runs f until it succeeds, fails with anything but ErrBusy, or
// busy has passed. Opening a new database in WAL mode from several
// processes (or stores) at once can fail with "database is locked" without
// SQLite's busy handler being consulted (the journal-mode switch), so the
// whole connect-and-migrate step is retried; migrations are transactional
// and re-read the schema version, so a retry applies none twice.
func retryBusy(ctx context.Context, busy time.Duration, f func() error) error {
	deadline := time.Now().Add(busy)
	wait := 5 * time.Millisecond
	for {
		err := f()
		if err == nil || !errors.Is(err, ErrBusy) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}
