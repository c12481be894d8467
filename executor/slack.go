package executor

import "time"

// slack is how early the loop wakes for a timer: at least its floor, and
// twice the recent worst lateness of wake-ups (a decaying maximum), capped
// at maxSlack, so a loaded host keeps deferred batches inside their windows.
type slack struct {
	floor, cur time.Duration
	late       time.Duration // decaying maximum of observed lateness
}

// maxSlack caps the slack: beyond it a host is too loaded to defer batches
// usefully anyway.
const maxSlack = 5 * time.Millisecond

func (s *slack) observe(late time.Duration) {
	s.late -= s.late / 64 // forget slowly
	s.late = max(s.late, late)
	s.cur = min(max(s.floor, 2*s.late), maxSlack)
}

func (s *slack) get() time.Duration { return s.cur }
