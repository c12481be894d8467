package engine

import (
	"errors"
	"sync"
)

// openSet is an engine's loaded models, so that closing the engine closes
// every model still open. The zero value is ready.
type openSet[M interface {
	comparable
	Close() error
}] struct {
	mu     sync.Mutex
	closed bool
	models map[M]struct{}
}

// add records m; it returns ErrClosed, leaving m unrecorded, once the
// engine is closed.
func (s *openSet[M]) add(m M) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.models == nil {
		s.models = map[M]struct{}{}
	}
	s.models[m] = struct{}{}
	return nil
}

// forget drops a closed model.
func (s *openSet[M]) forget(m M) {
	s.mu.Lock()
	delete(s.models, m)
	s.mu.Unlock()
}

// closeAll marks the set closed and closes every model in it, outside the
// lock (a model's Close calls forget). A second call does nothing.
func (s *openSet[M]) closeAll() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	models := make([]M, 0, len(s.models))
	for m := range s.models {
		models = append(models, m)
	}
	s.mu.Unlock()
	var errs []error
	for _, m := range models {
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}
