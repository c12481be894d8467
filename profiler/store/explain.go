package store

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/mattn/go-sqlite3"

	"github.com/gpulet/gpuletd/internal/fsperm"
)

// explain adds to an error that says the database cannot be written or
// opened (ErrReadOnly, SQLite's "unable to open database file") why, where
// the operating system says: SQLite opens a file it may not write
// read-only and only says "attempt to write a readonly database" at the
// first write, which leaves an operator to guess. To ErrBusy it adds the
// processes that hold the write lock (SQLite says only "database is
// locked"). Other errors are returned as they are.
func (s *Store) explain(err error) error {
	if err == nil || errors.Is(err, ErrPermission) || errors.Is(err, ErrReadOnlyFS) {
		return err
	}
	if errors.Is(err, ErrBusy) {
		who := WriteLockHolders(s.path)
		s.mu.Lock()
		s.busyWho = who
		s.mu.Unlock()
		if who != "" {
			return fmt.Errorf("%w: its write lock is held by %s", err, who)
		}
		return err
	}
	var se sqlite3.Error
	if !errors.Is(err, ErrReadOnly) && (!errors.As(err, &se) || se.Code != sqlite3.ErrCantOpen) {
		return err
	}
	if why := fsperm.WhyNotWritable(filepath.Dir(s.path), Files(s.path)...); why != nil {
		return fmt.Errorf("%w: %w", err, why)
	}
	return err
}
