// Package monoclock is the host's monotonic clock, CLOCK_MONOTONIC, read in
// nanoseconds: the clock in which gpuletd's processes tell each other
// instants (a request's deadline, when a gpu-let's batch ends). Every
// process on the host reads it alike, and setting the date does not move
// it. The wall clock (time.Time's UnixNano) steps with an NTP correction, a
// `date -s` or a virtual machine's clock put right after a pause, and a
// deadline sent in wall time lands off by the step in a process that took
// its own start in wall time before it.
package monoclock

import (
	"time"

	"golang.org/x/sys/unix"
)

// anchor pairs a time.Now with the host clock read right after it: Go's
// monotonic readings count on the same clock (CLOCK_MONOTONIC on Linux)
// from another origin, so an anchor turns one into the other.
type anchor struct {
	at time.Time
	ns int64
}

// base is the process's anchor.
var base = newAnchor()

// newAnchor reads time.Now between two readings of the host clock and
// takes their midpoint, from the closest of a few tries: off by half
// their gap at most, tens of nanoseconds.
func newAnchor() anchor {
	var a anchor
	gap := int64(-1)
	for range 8 {
		before := read()
		at := time.Now()
		after := read()
		if g := after - before; gap < 0 || g < gap {
			gap, a = g, anchor{at: at, ns: before + g/2}
		}
	}
	return a
}

// read reads CLOCK_MONOTONIC, 0 where it fails (never on Linux).
func read() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// Of is the host clock's reading at t, which must carry Go's monotonic
// reading (time.Now, and times added to or subtracted from it): the wall
// clock of a time without one (time.Unix, a parsed time) is not this clock.
func Of(t time.Time) int64 { return base.ns + int64(t.Sub(base.at)) }

// Time is the instant at which the host clock reads ns, with a monotonic
// reading, so that it compares and subtracts with time.Now on that clock.
func Time(ns int64) time.Time { return base.at.Add(time.Duration(ns - base.ns)) }
