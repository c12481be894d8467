package engine

import (
	"context"
	"time"

	"github.com/gpulet/gpuletd/internal/ctxsleep"
)

// Sleeper waits out the emulated engine's compute time. The executor uses
// RealSleeper; tests and the simulator inject their own clocks.
type Sleeper interface {
	// Sleep returns after d, or earlier with the context's cause when ctx
	// ends first.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealSleeper sleeps in wall-clock time.
type RealSleeper struct{}

var _ Sleeper = RealSleeper{}

// Sleep implements Sleeper with a timer.
func (RealSleeper) Sleep(ctx context.Context, d time.Duration) error {
	return ctxsleep.Sleep(ctx, d)
}
