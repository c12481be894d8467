package store

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/mattn/go-sqlite3"

	"github.com/gpulet/gpuletd/internal/fsperm"
)

// Sentinel errors. Every error the store returns wraps at most one of these
// together with the underlying SQLite error, and names what was being done
// (ErrReadOnly with the cause the system gives, ErrPermission or
// ErrReadOnlyFS, where it gives one).
var (
	// ErrNotFound is returned when a requested record does not exist.
	ErrNotFound = errors.New("not found")
	// ErrSchemaTooNew is returned by Open when the database was migrated by a
	// newer gpuletd than this one; the database is left untouched.
	ErrSchemaTooNew = errors.New("database schema is newer than this build knows")
	// ErrDiskFull is returned when SQLite reports SQLITE_FULL (no space left on
	// the device, or the page limit reached). The failed transaction is rolled
	// back and the database stays intact.
	ErrDiskFull = errors.New("database or disk is full")
	// ErrIO is returned when SQLite reports an I/O error (SQLITE_IOERR),
	// which a full or failing disk also causes.
	ErrIO = errors.New("disk I/O error")
	// ErrReadOnly is returned by writes while the store cannot be written
	// (it opened read-only, or the file system refuses writes).
	ErrReadOnly = errors.New("store is read-only")
	// ErrPermission comes with ErrReadOnly (or a database that cannot be
	// opened) when the database's files or folder may not be written by the
	// user the process runs as.
	ErrPermission = fsperm.ErrPermission
	// ErrReadOnlyFS comes with ErrReadOnly when the database is on a file
	// system mounted read-only.
	ErrReadOnlyFS = fsperm.ErrReadOnlyFS
	// ErrCorrupt is returned when the file is not a SQLite database or its
	// pages are malformed.
	ErrCorrupt = errors.New("database file is corrupt")
	// ErrBusy is returned when the database stayed locked by another process
	// for longer than the busy timeout (the error then names the processes
	// that hold its write lock, where the system lists them), and by
	// writes in the busyRest after that, which fail at once.
	ErrBusy = errors.New("database is busy")
	// ErrRunFinished is returned when a profile run that already finished is
	// finished again.
	ErrRunFinished = errors.New("profile run already finished")
	// ErrInvalid is returned when a record fails validation before it is
	// written.
	ErrInvalid = errors.New("invalid record")
)

// wrap names the operation op and classifies err: sql.ErrNoRows becomes
// ErrNotFound and SQLite result codes map onto the sentinels above. A nil err
// stays nil.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", op, ErrNotFound)
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrFull:
			return fmt.Errorf("%s: %w: %w", op, ErrDiskFull, err)
		case sqlite3.ErrIoErr:
			return fmt.Errorf("%s: %w: %w", op, ErrIO, err)
		case sqlite3.ErrReadonly:
			return fmt.Errorf("%s: %w: %w", op, ErrReadOnly, err)
		case sqlite3.ErrCorrupt, sqlite3.ErrNotADB:
			return fmt.Errorf("%s: %w: %w", op, ErrCorrupt, err)
		case sqlite3.ErrBusy, sqlite3.ErrLocked:
			return fmt.Errorf("%s: %w: %w", op, ErrBusy, err)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// invalid builds an ErrInvalid error with a formatted reason.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Unwritable tells whether err means the database cannot be written now (a
// full or failing disk, a read-only file system, a write lock another
// process holds past the busy timeout) rather than that the write itself
// was wrong.
func Unwritable(err error) bool {
	return errors.Is(err, ErrDiskFull) || errors.Is(err, ErrIO) || errors.Is(err, ErrReadOnly) || errors.Is(err, ErrBusy)
}
