package connlimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// ErrOverBudget means a request's bytes did not fit in the budget of bytes
// in flight before its wait ended.
var ErrOverBudget = errors.New("request bytes in flight are at their limit")

// Budget is a number of bytes that requests in flight may hold at once.
// Bulk holdings may fill three quarters of it together, so that neither a
// few huge bodies nor one model's flood can keep other requests waiting for
// room. A holding is bulk when it is large (over a sixteenth of the budget),
// or when its owner's (the model it is for) other holdings that are not
// large fill the owner's allowance of a sixty-fourth of the budget.
type Budget struct {
	max    int64
	all    *queue // every byte held
	bulk   *queue // bytes of bulk holdings
	mu     sync.Mutex
	owners map[string]owned
	used   atomic.Int64

	refused atomic.Int64
}

// NewBudget makes a budget of max bytes (max ≥ 1).
func NewBudget(max int64) *Budget {
	return &Budget{max: max, all: newQueue(max), bulk: newQueue(max - max/4), owners: map[string]owned{}}
}

// isLarge tells whether a holding of n bytes is large.
func (b *Budget) isLarge(n int64) bool { return n > b.max/16 }

// kind says how a holding counts: light ones only in the whole budget,
// heavy ones (an owner's past its allowance) and large ones in bulk too.
type kind uint8

const (
	light kind = iota
	heavy
	large
)

// acquire takes n bytes for owner as part of a holding that is large or
// not, continues one that holds bytes already or not, and holds mine bytes
// that are not large, waiting while they do not fit until ctx ends; it
// fails at once when n is over what such a holding may take. It says how
// the bytes count.
func (b *Budget) acquire(ctx context.Context, owner string, n, mine int64, cont, isLarge bool) (kind, error) {
	if n <= 0 {
		return light, nil
	}
	limit := b.max
	if isLarge {
		limit = b.max - b.max/4
	}
	if n > limit {
		b.refused.Add(1)
		return light, fmt.Errorf("acquire %d bytes of %d: %w", n, limit, ErrOverBudget)
	}
	k := b.claim(owner, n, mine, isLarge)
	if k != light {
		if err := b.bulk.acquire(ctx, n, cont); err != nil {
			b.unclaim(owner, n, k, false)
			b.refused.Add(1)
			return light, fmt.Errorf("acquire %d bytes: %w: %w", n, ErrOverBudget, err)
		}
	}
	if err := b.all.acquire(ctx, n, cont); err != nil {
		if k != light {
			b.bulk.release(n)
		}
		b.unclaim(owner, n, k, false)
		b.refused.Add(1)
		return light, fmt.Errorf("acquire %d bytes: %w: %w", n, ErrOverBudget, err)
	}
	b.used.Add(n)
	b.took(owner, n)
	return k, nil
}

// release gives back n bytes of owner's taken by one acquire.
func (b *Budget) release(owner string, n int64, k kind) {
	if n <= 0 {
		return
	}
	b.used.Add(-n)
	b.all.release(n)
	if k != light {
		b.bulk.release(n)
	}
	b.unclaim(owner, n, k, true)
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
// budget as owner's: the buffer's capacity as it doubles, up to size+1
// bytes when the body says its length (size ≥ 0; net/http ends such a body
// there; a body that goes on, where size was a guess, grows on as one of
// unknown length) and never past limit+1 (limit > 0: the longest body r
// gives, as http.MaxBytesReader does). Each step after the first waits for
// room ahead of bodies that begin. The bytes stay taken until release runs;
// on error nothing stays taken and release does nothing.
func (b *Budget) ReadAll(ctx context.Context, owner string, r io.Reader, size, limit int64) (data []byte, release func(), err error) {
	type part struct {
		n    int64
		kind kind
	}
	var held, heldBulk, heldSmall int64
	var parts []part
	giveBack := func() {
		for _, p := range parts {
			b.release(owner, p.n, p.kind)
		}
		parts, held, heldBulk, heldSmall = nil, 0, 0, 0
	}
	fail := func(err error) ([]byte, func(), error) {
		giveBack()
		return nil, func() {}, err
	}
	grow := func(to int64) error {
		// A body is large once it says or shows it is; its bytes from then
		// on count against bulk holdings' three quarters.
		isLarge := b.isLarge(to) || (size >= 0 && b.isLarge(size+1))
		step := to - held
		if to > b.max || (isLarge && heldBulk+step > b.max-b.max/4) {
			// Not even the whole budget would hold it beside what this
			// body holds already: waiting cannot help.
			b.refused.Add(1)
			return fmt.Errorf("hold %d bytes of %d: %w", to, b.max, ErrOverBudget)
		}
		k, err := b.acquire(ctx, owner, step, heldSmall, held > 0, isLarge)
		if err != nil {
			return err
		}
		parts = append(parts, part{step, k})
		if k != light {
			heldBulk += step
		}
		if k != large {
			heldSmall += step
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

// Hold takes n bytes for owner of a request that is already in memory (a
// gRPC message, which the gRPC server reads whole before the call), waiting
// for room until ctx ends. The bytes stay taken until release runs; on
// error nothing is taken and release does nothing.
func (b *Budget) Hold(ctx context.Context, owner string, n int64) (release func(), err error) {
	k, err := b.acquire(ctx, owner, n, 0, false, b.isLarge(n))
	if err != nil {
		return func() {}, err
	}
	return b.releaser(owner, n, k), nil
}

// releaser gives back, once, n bytes of owner's taken as k.
func (b *Budget) releaser(owner string, n int64, k kind) func() {
	var once sync.Once
	return func() { once.Do(func() { b.release(owner, n, k) }) }
}

// Take takes n bytes for owner at once, past the budget's size if need be:
// the bytes of something a request holds in memory already (its decoded
// inputs, its outputs), which waiting would not keep out of memory and
// which a request waiting for them, holding its body meanwhile, could
// deadlock with another doing the same. Until the bytes held are back
// under the size, every acquisition waits. The bytes stay taken until
// release runs.
func (b *Budget) Take(owner string, n int64) (release func()) {
	if n <= 0 {
		return func() {}
	}
	k := b.claim(owner, n, 0, b.isLarge(n))
	if k != light {
		b.bulk.force(n)
	}
	b.all.force(n)
	b.used.Add(n)
	b.took(owner, n)
	return b.releaser(owner, n, k)
}
