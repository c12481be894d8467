package store

import (
	"context"
	"fmt"
	"go.uber.org/zap"
)

// noteWrite records what a write's outcome says about the disk.
func (s *Store) noteWrite(err error) {
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
	defer s.mu.Unlock()
	if s.w != nil {
		return nil
	}
	w, err := s.openWriter(ctx)
	if err != nil {
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
