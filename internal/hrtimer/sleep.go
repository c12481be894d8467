package hrtimer

import (
	"context"
	"runtime"
	"time"

	"github.com/gpulet/gpuletd/internal/ctxsleep"
)

// spinBelow is the longest sleep that Sleep spins through rather than
// arming a kernel timer: waking from one costs about 45 µs on a 2-core VM.
const spinBelow = 50 * time.Microsecond

// Sleep is ctxsleep.Sleep on a kernel timer: it returns nil after d, or the
// context's cause as soon as ctx ends, whichever is first; a context that
// has already ended returns at once, even for d ≤ 0. It waits in the
// calling goroutine, with no goroutine of its own.
func Sleep(ctx context.Context, d time.Duration) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if d <= 0 {
		return nil
	}
	start := time.Now()
	if d < spinBelow {
		for time.Since(start) < d {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			runtime.Gosched()
		}
		return nil
	}
	f, err := newClockFile()
	if err != nil {
		return ctxsleep.Sleep(ctx, d)
	}
	defer func() { _ = f.close() }() // a timerfd's close fails only on a bad descriptor
	if f.set(d) != nil {
		return ctxsleep.Sleep(ctx, d)
	}
	stop := context.AfterFunc(ctx, f.interrupt)
	defer stop()
	if f.wait() != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return ctxsleep.Sleep(ctx, d-time.Since(start)) // the file failed: the runtime's timer for the rest
	}
	return nil
}
