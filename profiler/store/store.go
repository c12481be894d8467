package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/internal/ctxsleep"
	"github.com/gpulet/gpuletd/internal/fsperm"
)

// Store is an open gpuletd database. It is safe for concurrent use; Close it
// when done.
type Store struct {
	path string
	cfg  config
	now  func() time.Time
	log  *zap.Logger

	mu         sync.Mutex
	w          *sql.DB   // exactly one connection: every write is serialised here; nil while read-only
	retired    []*sql.DB // writers SQLite opened read-only, closed by Recover and Close
	unwritable error     // why writes fail now (nil: they do not)
	busyAt     time.Time // when a write last failed with ErrBusy (see busyRest)
	busyWho    string    // the processes that held the write lock then (WriteLockHolders)
	failures   atomic.Int64

	r atomic.Pointer[sql.DB] // read-only connections

	runsMu   sync.Mutex
	runLocks map[int64]*os.File // the runs this process started and has not finished (runlock.go)
}

// FileName is the database's file name in the daemon's state_dir.
const FileName = "gpuletd.db"

// Files are the database file at path and the two files SQLite keeps
// beside it in WAL mode: its write-ahead log and its shared-memory index.
func Files(path string) []string { return []string{path, path + "-wal", path + "-shm"} }

// Open opens (creating it and its parent directory when missing) the database
// at path, checks it, and applies pending migrations. A database written by a
// newer gpuletd fails with ErrSchemaTooNew; a file that is not a sound SQLite
// database fails with ErrCorrupt. Errors name the path. With
// WithReadOnlyFallback, a database that cannot be written (a full disk) but
// is current opens read-only instead of failing; see Writable and Recover.
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
		if why := fsperm.WhyNoMkdir(filepath.Dir(abs)); why != nil && errors.Is(err, fs.ErrPermission) {
			err = fmt.Errorf("%w: %w", err, why)
		}
		return nil, fmt.Errorf("open store %s: create directory: %w", abs, err)
	}
	s := &Store{path: abs, cfg: cfg, now: cfg.now, log: cfg.log.With(zap.String("path", abs)), runLocks: map[int64]*os.File{}}

	w, werr := s.openWriter(ctx)
	if werr != nil {
		werr = s.explain(werr)
		// A database another process holds locked does not open
		// read-only: the fallback's immutable readers take no locks, and
		// would read pages that process is writing.
		if !cfg.readOnlyFallback || !Unwritable(werr) || errors.Is(werr, ErrBusy) {
			return nil, fmt.Errorf("open store %s: %w", abs, werr)
		}
		if err := s.openReadOnly(ctx, werr); err != nil {
			return nil, fmt.Errorf("open store %s: %w", abs, errors.Join(werr, err))
		}
		return s, nil
	}
	r, err := s.openReaders(ctx, false)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", abs, err), w.Close())
	}
	s.w = w
	s.r.Store(r)
	return s, nil
}

// openWriter connects the one writer connection, optionally checks the
// file, and migrates.
func (s *Store) openWriter(ctx context.Context) (*sql.DB, error) {
	w := sql.OpenDB(newConnector(s.path, connWriter, s.cfg.busyTimeout, s.cfg.maxPageCount))
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	if err := retryBusy(ctx, s.cfg.busyTimeout, func() error { return s.initWriter(ctx, w) }); err != nil {
		return nil, errors.Join(err, w.Close())
	}
	return w, nil
}

// openReaders opens the pool of read-only connections. Immutable ones read
// the file without the shared-memory index that WAL readers need, which a
// full disk cannot hold; they do not see later writes.
func (s *Store) openReaders(ctx context.Context, immutable bool) (*sql.DB, error) {
	kind := connReader
	if immutable {
		kind = connImmutable
	}
	r := sql.OpenDB(newConnector(s.path, kind, s.cfg.busyTimeout, 0))
	r.SetMaxOpenConns(s.cfg.readers)
	r.SetMaxIdleConns(s.cfg.readers)
	if err := r.PingContext(ctx); err != nil {
		return nil, errors.Join(wrap("open readers", err), r.Close())
	}
	return r, nil
}

// openReadOnly serves reads from a database that cannot be written now:
// werr says why. The schema must be current, as nothing can migrate it.
func (s *Store) openReadOnly(ctx context.Context, werr error) error {
	r, err := s.openReaders(ctx, true)
	if err != nil {
		return err
	}
	var v int
	if err := r.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_version").Scan(&v); err != nil {
		return errors.Join(wrap("read schema version", err), r.Close())
	}
	if v != SchemaVersion() {
		return errors.Join(fmt.Errorf("schema version %d needs migrating to %d, which needs a writable database", v, SchemaVersion()), r.Close())
	}
	if s.cfg.quickCheck {
		problems, err := quickCheck(ctx, r)
		if err != nil {
			return errors.Join(err, r.Close())
		}
		if err := s.acceptProblems(problems, false); err != nil {
			return errors.Join(err, r.Close())
		}
	}
	s.r.Store(r)
	s.unwritable = werr
	s.failures.Add(1)
	s.log.Warn("the database cannot be written: serving what it holds, read-only", zap.Error(werr))
	return nil
}

// initWriter connects the writer w, optionally checks the file, and migrates.
func (s *Store) initWriter(ctx context.Context, w *sql.DB) error {
	if err := w.PingContext(ctx); err != nil {
		return wrap("connect", err)
	}
	if s.cfg.quickCheck {
		problems, err := quickCheck(ctx, w)
		if err != nil {
			return err
		}
		if err := s.acceptProblems(problems, true); err != nil {
			return err
		}
		if len(problems) > 0 {
			if err := s.quarantineEvents(ctx, w); err != nil {
				return err
			}
		}
	}
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	if err := migrate(ctx, w, ms, s.now, s.log); err != nil {
		return err
	}
	return checkWritable(ctx, w)
}

// checkWritable runs a write that changes nothing on w and rolls it back.
// SQLite opens a file it may not write read-only without a word (and
// begins a write transaction on it too); a current schema needs no
// migration, so without this a writer that can never write would pass for
// one that can.
func checkWritable(ctx context.Context, w *sql.DB) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return wrap("check the database can be written", err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM schema_version WHERE 0"); err != nil {
		_ = tx.Rollback()
		return wrap("check the database can be written", err)
	}
	return wrap("check the database can be written", tx.Rollback())
}

// quickCheck runs PRAGMA quick_check and returns its complaints (at most a
// few), none when the file is sound.
func quickCheck(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return nil, wrap("check database", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, wrap("check database", err)
		}
		if line != "ok" && len(problems) < 5 {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("check database", err)
	}
	return problems, nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close closes the reader pool and then the writer. It waits for queries in
// progress to finish.
func (s *Store) Close() error {
	s.runsMu.Lock()
	left := slices.Collect(maps.Keys(s.runLocks))
	s.runsMu.Unlock()
	for _, id := range left { // runs this process leaves running: left, as its end would leave them
		s.leaveRun(id)
	}
	var errs []error
	if r := s.r.Load(); r != nil {
		errs = append(errs, r.Close())
	}
	s.mu.Lock()
	for _, r := range s.retired {
		errs = append(errs, r.Close())
	}
	s.retired = nil
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	s.mu.Unlock()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store %s: %w", s.path, err)
	}
	return nil
}

// reader is the pool reads use.
func (s *Store) reader() *sql.DB { return s.r.Load() }

// write runs fn in one IMMEDIATE transaction on the writer connection and
// commits it; any error rolls the whole transaction back and is wrapped with
// op. A write that fails because the disk cannot take it, or because
// another process held the write lock past the busy timeout, marks the
// store unwritable; one that succeeds marks it writable again. Within
// busyRest of a write that found the lock held, writes fail at once rather
// than each wait the busy timeout (Recover tries the lock meanwhile).
func (s *Store) write(ctx context.Context, op string, fn func(*sql.Tx) error) error {
	s.mu.Lock()
	w, why, busyAt, who := s.w, s.unwritable, s.busyAt, s.busyWho
	s.mu.Unlock()
	if w == nil {
		s.failures.Add(1)
		if errors.Is(why, ErrReadOnly) {
			return fmt.Errorf("%s: %w", op, why)
		}
		return fmt.Errorf("%s: %w: %w", op, ErrReadOnly, why)
	}
	if ago := time.Since(busyAt); errors.Is(why, ErrBusy) && ago < busyRest {
		s.failures.Add(1)
		if who == "" {
			who = "another process"
		}
		return fmt.Errorf("%s: %w: its write lock was held by %s %s ago", op, ErrBusy, who, ago.Round(time.Millisecond))
	}
	return s.writeOn(ctx, w, op, fn)
}

// writeOn runs fn as write does on the writer w, explains a failure and
// notes what it says of the disk and the lock.
func (s *Store) writeOn(ctx context.Context, w *sql.DB, op string, fn func(*sql.Tx) error) error {
	err := s.explain(s.runWrite(ctx, w, op, fn))
	s.noteWrite(w, err)
	return err
}

func (s *Store) runWrite(ctx context.Context, w *sql.DB, op string, fn func(*sql.Tx) error) error {
	tx, err := w.BeginTx(ctx, nil)
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
		if serr := ctxsleep.Sleep(ctx, wait); serr != nil {
			return errors.Join(err, serr)
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}
