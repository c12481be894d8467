package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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

// Recover tries to make a store that opened read-only writable again (once
// the disk has room): it connects the writer, checks and migrates as Open
// does, and reopens the readers so that they see later writes. It does
// nothing on a store with a writer; writes there clear the state themselves.
func (s *Store) Recover(ctx context.Context) error {
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
