package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// noteWrite records what the outcome of a write on w says about the disk.
// A writer that finds the database read-only never writes again: SQLite
// opened the file read-only (its permissions) or the file system turned
// read-only under it. It is retired, so that Recover connects anew once
// the cause is mended.
func (s *Store) noteWrite(w *sql.DB, err error) {
	switch {
	case err == nil:
		s.mu.Lock()
		if s.unwritable != nil {
			s.log.Info("the database can be written again")
		}
		s.unwritable = nil
		s.mu.Unlock()
	case Unwritable(err):
		s.failures.Add(1)
		s.mu.Lock()
		if s.unwritable == nil {
			s.log.Warn("the database cannot be written", zap.Error(err))
		}
		s.unwritable = err
		if errors.Is(err, ErrBusy) {
			s.busyAt = time.Now()
		}
		if errors.Is(err, ErrReadOnly) && s.w == w {
			s.retired = append(s.retired, w)
			s.w = nil
		}
		s.mu.Unlock()
	}
}

// Writable tells whether writes succeed now, and if not, the error that
// says why (the last failed write's, or the one that made Open fall back to
// read-only).
func (s *Store) Writable() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unwritable == nil, s.unwritable
}

// WriteFailures is how many writes failed because the database could not be
// written, since Open.
func (s *Store) WriteFailures() int64 { return s.failures.Load() }

// busyRest is how long after a write found the write lock held by
// another process past the busy timeout the store's writes fail at once
// with ErrBusy: a daemon's every write (events, plans, profiles) would
// otherwise wait the busy timeout in turn while, say, a sqlite3 shell
// holds a transaction open. Recover, which the daemon calls every few
// seconds while the store cannot be written, tries the lock meanwhile and
// ends the rest as soon as the lock is free; without it a write tries
// again once the rest is over.
const busyRest = 10 * time.Second

// Recover tries to make a store that cannot be written writable again. On
// a store that opened read-only (once the disk has room) it connects the
// writer, checks and migrates as Open does, and reopens the readers so
// that they see later writes. On one whose write lock another process
// held, it takes the lock and lets it go, waiting the busy timeout at most.
// It does nothing on a store whose writes succeed, or fail for the disk;
// writes there clear the state themselves.
func (s *Store) Recover(ctx context.Context) error {
	s.mu.Lock()
	w, why := s.w, s.unwritable
	s.mu.Unlock()
	if w != nil && errors.Is(why, ErrBusy) {
		if err := s.writeOn(ctx, w, "take the write lock", func(*sql.Tx) error { return nil }); err != nil {
			return fmt.Errorf("recover store %s: %w", s.path, err)
		}
		return nil
	}
	s.mu.Lock()
	retired := s.retired
	s.retired = nil
	err := s.reconnect(ctx)
	s.mu.Unlock()
	var errs []error
	for _, r := range retired {
		errs = append(errs, r.Close())
	}
	if err != nil {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		s.log.Debug("close retired writer", zap.Error(err))
	}
	return nil
}

// reconnect is Recover's work, with s.mu held.
func (s *Store) reconnect(ctx context.Context) error {
	if s.w != nil {
		return nil
	}
	w, err := s.openWriter(ctx)
	if err != nil {
		err = s.explain(err)
		s.unwritable = err
		return fmt.Errorf("recover store %s: %w", s.path, err)
	}
	r, err := s.openReaders(ctx, false)
	if err != nil {
		_ = w.Close()
		return fmt.Errorf("recover store %s: %w", s.path, err)
	}
	old := s.r.Swap(r)
	s.w, s.unwritable = w, nil
	s.log.Info("the database can be written again")
	if old != nil {
		_ = old.Close()
	}
	return nil
}
