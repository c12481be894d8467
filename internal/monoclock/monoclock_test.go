package monoclock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The host clock as another process reads it (clock_gettime itself, not
// through this package's anchor) and this package's conversions agree: an
// instant read there, converted, falls between the time.Now readings
// around it, within the anchor's error (a wall clock taken for it would be
// off by decades).
func TestOfAndTimeFollowTheHostClock(t *testing.T) {
	const slack = 100 * time.Microsecond
	var ts unix.Timespec
	before := time.Now()
	require.NoError(t, unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts))
	after := time.Now()
	at := Time(ts.Nano())
	require.False(t, at.Before(before.Add(-slack)), "%v before %v", at, before)
	require.False(t, at.After(after.Add(slack)), "%v after %v", at, after)

	deadline := time.Now().Add(25 * time.Millisecond)
	ns := Of(deadline)
	require.Equal(t, deadline.Sub(before), Time(ns).Sub(before), "Time undoes Of")
	left := time.Duration(ns - read())
	require.Greater(t, left, time.Duration(0))
	require.LessOrEqual(t, left, 25*time.Millisecond)
}
