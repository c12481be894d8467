package sched

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBusyShare(t *testing.T) {
	var b busyShare
	require.Equal(t, 1.0, b.idleScale(0), "a new gpu-let counts busy: the whole bound")
	require.InDelta(t, math.Exp(-3), b.decayed(3*time.Second), 1e-12, "free since 0")
	// Busy for the next second: e^−1 of the free share is left.
	b.ran(3*time.Second, 4*time.Second)
	free := (1 - math.Exp(-3)) * math.Exp(-1)
	require.InDelta(t, 1-free, b.decayed(4*time.Second), 1e-12)
	require.Equal(t, 1.0, b.idleScale(4*time.Second), "busy over half the time: the whole bound")
	// A gpu-let that runs 10% of the time settles at about a tenth.
	for i := range 600 {
		start := 4*time.Second + time.Duration(i)*10*time.Millisecond
		b.ran(start+9*time.Millisecond, start+10*time.Millisecond)
	}
	require.InDelta(t, 0.1, b.decayed(10*time.Second), 0.005)
	require.InDelta(t, 0.2, b.idleScale(10*time.Second), 0.01)
	require.InDelta(t, 0.0, b.idleScale(70*time.Second), 1e-20, "a minute free")
}
