package sched

import (
	"fmt"
	"time"
)

// Clock tells the time as a duration since the clock's epoch. Drivers use it;
// the Scheduler itself only ever receives times as arguments.
type Clock interface {
	Now() time.Duration
}

// RealClock is monotonic wall time since it was made.
type RealClock struct {
	start time.Time
}

// NewRealClock returns a RealClock whose epoch is now.
func NewRealClock() *RealClock { return &RealClock{start: time.Now()} }

// Now returns the monotonic time elapsed since the clock was made.
func (c *RealClock) Now() time.Duration { return time.Since(c.start) }

// Start is the instant the clock reads 0 at, with Go's monotonic reading.
func (c *RealClock) Start() time.Time { return c.start }

// VirtualClock is a clock its owner moves forward by hand, for simulation and
// tests. The zero value reads 0.
type VirtualClock struct {
	now time.Duration
}

// Now returns the clock's current time.
func (c *VirtualClock) Now() time.Duration { return c.now }

// AdvanceTo moves the clock to t; it refuses to move backwards.
func (c *VirtualClock) AdvanceTo(t time.Duration) error {
	if t < c.now {
		return fmt.Errorf("advance virtual clock to %v from %v: %w", t, c.now, ErrTimeOrder)
	}
	c.now = t
	return nil
}

// Advance moves the clock forward by d (negative d is treated as 0).
func (c *VirtualClock) Advance(d time.Duration) {
	if d > 0 {
		c.now += d
	}
}
