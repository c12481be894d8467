package connlimit

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// waiters is how many acquisitions of each class wait in q.
func (q *queue) waiters() [2]int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return [2]int{q.waiting[continuing].Len(), q.waiting[beginning].Len()}
}

// tryAcquire takes n at once if they fit ahead of the waiters of cont's
// class and those served before it, and says whether it did.
func (q *queue) tryAcquire(n int64, cont bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.free(n, class(cont)) {
		return false
	}
	q.cur += n
	return true
}

// held is what q has handed out.
func (q *queue) held() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.cur
}

// acquireAsync acquires in a goroutine and reports on the channel.
func acquireAsync(ctx context.Context, q *queue, n int64, cont bool) <-chan error {
	done := make(chan error, 1)
	go func() { done <- q.acquire(ctx, n, cont) }()
	return done
}

func waitFor(t *testing.T, q *queue, want [2]int) {
	t.Helper()
	require.Eventually(t, func() bool { return q.waiters() == want }, 5*time.Second, time.Millisecond, "waiters %v", want)
}

func TestQueueServesContinuingBeforeBeginning(t *testing.T) {
	q := newQueue(10)
	require.True(t, q.tryAcquire(10, false))
	ctx := context.Background()

	first := acquireAsync(ctx, q, 4, false)
	waitFor(t, q, [2]int{0, 1})
	second := acquireAsync(ctx, q, 4, true)
	waitFor(t, q, [2]int{1, 1})
	require.False(t, q.tryAcquire(1, true), "nothing is free")

	q.release(4)
	require.NoError(t, <-second, "the continuing request goes first, though it came second")
	waitFor(t, q, [2]int{0, 1})
	require.False(t, q.tryAcquire(0, false), "a beginning request does not pass one that waits")
	q.release(4)
	require.NoError(t, <-first)
	require.Equal(t, int64(10), q.held())
}

func TestQueueHeadOfLineAndCancel(t *testing.T) {
	q := newQueue(10)
	require.True(t, q.tryAcquire(8, false))
	ctx, cancel := context.WithCancel(context.Background())
	big := acquireAsync(ctx, q, 6, false)
	waitFor(t, q, [2]int{0, 1})
	small := acquireAsync(context.Background(), q, 2, false)
	waitFor(t, q, [2]int{0, 2})
	require.Equal(t, int64(8), q.held(), "the small one waits behind the big one though it fits")

	cancel()
	require.ErrorIs(t, <-big, context.Canceled)
	require.NoError(t, <-small, "once the big one leaves, the one behind it is served")
	require.Equal(t, [2]int{}, q.waiters())
	require.Equal(t, int64(10), q.held())
	q.release(10)
	require.Zero(t, q.held())
	require.Panics(t, func() { q.release(1) })
}

// blockingReader gives its bytes as they are sent on the channel.
type blockingReader struct {
	parts chan []byte
	rest  []byte
}

func (r *blockingReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		part, ok := <-r.parts
		if !ok {
			return 0, io.EOF
		}
		r.rest = part
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// A body that has started being read gets the room it needs to grow before
// bodies that begin later take it, even those that asked first; a flood of
// bodies each holding its first part cannot fill the budget with bodies
// none of which is ever read whole.
func TestABodyBeingReadGrowsBeforeNewOnesBegin(t *testing.T) {
	b := NewBudget(16 << 20) // bulk at most 12 MiB; allowance 256 KiB; large over 1 MiB
	ctx := context.Background()
	rest, err := b.Hold(ctx, "vgg", 11<<20+512<<10)
	require.NoError(t, err)
	// Bodies that are not large: the first fills vgg's allowance, and
	// the others are bulk.
	allowance, err := b.Hold(ctx, "vgg", 256<<10)
	require.NoError(t, err)
	defer allowance()
	some, err := b.Hold(ctx, "vgg", 256<<10)
	require.NoError(t, err)
	last, err := b.Hold(ctx, "vgg", 256<<10)
	require.NoError(t, err)
	require.Equal(t, int64(12<<20), b.bulk.held(), "bulk is full")

	// A body of vgg's (600 KiB: 256 KiB, then 512, then its length) waits
	// for its first part.
	const size = 600 << 10
	r := &blockingReader{parts: make(chan []byte)}
	read := make(chan error, 1)
	go func() {
		data, release, err := b.ReadAll(ctx, "vgg", r, size, 0)
		if err == nil && len(data) != size {
			err = io.ErrUnexpectedEOF
		}
		release()
		read <- err
	}()
	waitFor(t, b.bulk, [2]int{0, 1})
	require.Equal(t, int64(12<<20+256<<10), b.Holds("vgg"), "what a body waits for is not held")
	last()
	waitFor(t, b.bulk, [2]int{0, 0})
	// Its first part in, another body begins and waits, then the first
	// body needs room to grow.
	newcomer := make(chan error, 1)
	go func() {
		release, err := b.Hold(ctx, "vgg", 256<<10)
		release()
		newcomer <- err
	}()
	waitFor(t, b.bulk, [2]int{0, 1})
	r.parts <- make([]byte, 256<<10)
	waitFor(t, b.bulk, [2]int{1, 1})

	some()
	waitFor(t, b.bulk, [2]int{0, 1})
	select {
	case err := <-newcomer:
		require.Fail(t, "the newcomer took the room the body being read needed", "%v", err)
	default:
	}
	r.parts <- make([]byte, 256<<10)
	waitFor(t, b.bulk, [2]int{1, 1})

	rest()
	r.parts <- make([]byte, size-512<<10)
	close(r.parts)
	require.NoError(t, <-read)
	require.NoError(t, <-newcomer)
	allowance()
	require.Zero(t, b.InUse())
	require.Equal(t, [2]int{}, b.bulk.waiters())
}
