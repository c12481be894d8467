package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestInflightWaitsForAdmittedRequests(t *testing.T) {
	var f inflight
	require.True(t, f.acquire())
	require.True(t, f.acquire())
	done := make(chan error, 1)
	go func() { done <- f.closeAndWait(context.Background()) }()
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.closed
	}, time.Second, time.Millisecond)
	require.False(t, f.acquire(), "a closing gpu-let admits nothing more")
	f.release()
	select {
	case <-done:
		t.Fatal("returned with one request still in flight")
	case <-time.After(20 * time.Millisecond):
	}
	f.release()
	require.NoError(t, <-done)
	require.NoError(t, f.closeAndWait(context.Background()), "closing twice is harmless")
}

func TestInflightWaitEndsWithContext(t *testing.T) {
	var f inflight
	require.True(t, f.acquire())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, f.closeAndWait(ctx), context.DeadlineExceeded)
	f.release()
	require.NoError(t, f.closeAndWait(context.Background()))
}

func TestInflightIdleGpuletClosesAtOnce(t *testing.T) {
	var f inflight
	require.NoError(t, f.closeAndWait(context.Background()))
	require.False(t, f.acquire())
}
