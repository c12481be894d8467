// Package ctxsleep waits out a duration unless a context ends first: the one
// helper every retry loop, back-off and paced sender of gpuletd sleeps with.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep returns nil after d, or the context's cause as soon as ctx ends,
// whichever is first; a context that has already ended returns at once,
// even for d ≤ 0.
func Sleep(ctx context.Context, d time.Duration) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
