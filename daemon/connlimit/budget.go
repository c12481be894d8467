package connlimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// ErrOverBudget means a request's bytes did not fit in the budget of bytes
// in flight before its wait ended.
var ErrOverBudget = errors.New("request bytes in flight are at their limit")

// Budget is a number of bytes that requests in flight may hold at once.
// Large holdings (over a sixteenth of the budget each) may fill three
// quarters of it together, so that a few huge bodies cannot keep ordinary
// requests waiting for room.
type Budget struct {
	max     int64
	sem     *semaphore.Weighted // every byte held
	large   *semaphore.Weighted // bytes of large holdings
	used    atomic.Int64
	refused atomic.Int64
}

// NewBudget makes a budget of max bytes (max ≥ 1).
func NewBudget(max int64) *Budget {
	return &Budget{max: max, sem: semaphore.NewWeighted(max), large: semaphore.NewWeighted(max - max/4)}
}

// isLarge tells whether a holding of n bytes is large.
func (b *Budget) isLarge(n int64) bool { return n > b.max/16 }

// acquire takes n bytes as part of a large holding or not, waiting while
// they do not fit until ctx ends; it fails at once when n is over what
// such a holding may take.
func (b *Budget) acquire(ctx context.Context, n int64, large bool) error {
	if n <= 0 {
		return nil
	}
	limit := b.max
	if large {
		limit = b.max - b.max/4
	}
	if n > limit {
		b.refused.Add(1)
		return fmt.Errorf("acquire %d bytes of %d: %w", n, limit, ErrOverBudget)
	}
	if large {
		if err := take(ctx, b.large, n); err != nil {
			b.refused.Add(1)
			return fmt.Errorf("acquire %d bytes: %w: %w", n, ErrOverBudget, err)
		}
	}
	if err := take(ctx, b.sem, n); err != nil {
		if large {
			b.large.Release(n)
		}
		b.refused.Add(1)
		return fmt.Errorf("acquire %d bytes: %w: %w", n, ErrOverBudget, err)
	}
	b.used.Add(n)
	return nil
}

// take acquires n of sem, at once when they are free even if ctx has ended
// (a request whose wait is over still gets room that is there), else
// waiting until ctx ends.
func take(ctx context.Context, sem *semaphore.Weighted, n int64) error {
	if sem.TryAcquire(n) {
		return nil
	}
	return sem.Acquire(ctx, n)
}

// release gives back n bytes taken by one acquire.
func (b *Budget) release(n int64, large bool) {
	if n <= 0 {
		return
	}
	b.used.Add(-n)
	b.sem.Release(n)
	if large {
		b.large.Release(n)
	}
}

// InUse is the number of bytes held now.
func (b *Budget) InUse() int64 { return b.used.Load() }

// Max is the budget's size.
func (b *Budget) Max() int64 { return b.max }

// Refused is how many acquisitions failed so far.
func (b *Budget) Refused() int64 { return b.refused.Load() }

// readStep is the least a body of unknown length reserves at a time.
const readStep = 256 << 10

// MaxBody is the longest body ReadAll can take with nothing else held: a
// large holding fills three quarters of the budget at most, and a body of
// n bytes holds n+1 (the byte that shows a longer body).
func (b *Budget) MaxBody() int64 { return b.max - b.max/4 - 1 }

// ReadAll reads r to its end holding the memory it reads into in the
// budget: the buffer's capacity as it doubles, up to size+1 bytes when the
// body says its length (size ≥ 0; net/http ends such a body there; a body
// that goes on, where size was a guess, grows on as one of unknown length)
// and
// never past limit+1 (limit > 0: the longest body r gives, as
// http.MaxBytesReader does). The bytes stay taken until release runs; on
// error nothing stays taken and release does nothing.
func (b *Budget) ReadAll(ctx context.Context, r io.Reader, size, limit int64) (data []byte, release func(), err error) {
	type part struct {
		n     int64
		large bool
	}
	var held, heldLarge int64
	var parts []part
	giveBack := func() {
		for _, p := range parts {
			b.release(p.n, p.large)
		}
		parts, held, heldLarge = nil, 0, 0
	}
	fail := func(err error) ([]byte, func(), error) {
		giveBack()
		return nil, func() {}, err
	}
	grow := func(to int64) error {
		// A body is large once it says or shows it is; its bytes from then
		// on count against the large bodies' three quarters.
		large := b.isLarge(to) || (size >= 0 && b.isLarge(size+1))
		step := to - held
		if to > b.max || (large && heldLarge+step > b.max-b.max/4) {
			// Not even the whole budget would hold it beside what this
			// body holds already: waiting cannot help.
			b.refused.Add(1)
			return fmt.Errorf("hold %d bytes of %d: %w", to, b.max, ErrOverBudget)
		}
		if err := b.acquire(ctx, step, large); err != nil {
			return err
		}
		parts = append(parts, part{step, large})
		if large {
			heldLarge += step
		}
		grown := make([]byte, len(data), to)
		copy(grown, data)
		data, held = grown, to
		return nil
	}
	for {
		if len(data) == cap(data) {
			// Doubling, but never past the whole budget (a body that fills
			// it fails when it grows once more), nor past a known length:
			// a body that trickles in holds only what has come. One byte
			// more than promised lets a longer body show itself.
			to := max(2*int64(cap(data)), readStep)
			if int64(cap(data)) < b.max {
				to = min(to, b.max)
			}
			if size >= 0 && int64(cap(data)) < size+1 {
				to = min(to, size+1)
			}
			if limit > 0 {
				if int64(cap(data)) > limit {
					return fail(fmt.Errorf("read body: more than %d bytes", limit))
				}
				to = min(to, limit+1)
			}
			if err := grow(to); err != nil {
				return fail(err)
			}
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if errors.Is(err, io.EOF) {
			return data, giveBack, nil
		}
		if err != nil {
			return fail(err)
		}
	}
}

// Hold takes n bytes of a request that is already in memory (a gRPC message,
// which the gRPC server reads whole before the call), waiting for room until
// ctx ends. The bytes stay taken until release runs; on error nothing is
// taken and release does nothing.
func (b *Budget) Hold(ctx context.Context, n int64) (release func(), err error) {
	large := b.isLarge(n)
	if err := b.acquire(ctx, n, large); err != nil {
		return func() {}, err
	}
	var once sync.Once
	return func() { once.Do(func() { b.release(n, large) }) }, nil
}
