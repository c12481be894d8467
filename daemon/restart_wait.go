package daemon

import (
	"context"
	"sync"
	"time"
)

// limitPoll is how often a restart that waits after an OOM-killed start
// looks whether the memory limit over gpuletd was raised.
const limitPoll = 5 * time.Second

// retryNow is a signal to executors waiting to be started again: try now.
type retryNow struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait is closed at the next fire.
func (r *retryNow) wait() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ch == nil {
		r.ch = make(chan struct{})
	}
	return r.ch
}

// fire wakes every wait so far.
func (r *retryNow) fire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ch != nil {
		close(r.ch)
		r.ch = nil
	}
}

// waitToRestart waits d before the next try to start a dead executor, or
// less: when an operator asks for a new plan (retry.fire), or, after a
// start the kernel killed for memory under the limit limit (0: none
// known), once that limit is raised or taken off. False when ctx ends.
func (s *supervisor) waitToRestart(ctx context.Context, d time.Duration, limit int64) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	var poll <-chan time.Time
	if limit > 0 {
		t := time.NewTicker(limitPoll)
		defer t.Stop()
		poll = t.C
	}
	retry := s.retry.wait()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
			return true
		case <-retry:
			return true
		case <-poll:
			if limitRaised(limit, s.oomNow()) {
				return true
			}
		}
	}
}
