package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadersAndWriterNeverBusy runs many readers against one store while
// writers append, and requires that no call fails: no "database is locked",
// no SQLITE_BUSY, and readers never see the history shrink.
func TestReadersAndWriterNeverBusy(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, WithReaders(4))
	sha := shaOf("m")
	const (
		readers = 8
		writers = 3
		rounds  = 40
	)
	var failures atomic.Int64
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) {
		failures.Add(1)
		errOnce.Do(func() { firstErr = err })
	}

	require.NoError(t, s.PutLatency(ctx, profilePoints(sha, "seed")))

	var writersWG, readersWG sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		writersWG.Go(func() {
			for i := range rounds {
				pts := make([]LatencyPoint, 0, 16)
				for b := 1; b <= 16; b++ {
					pts = append(pts, LatencyPoint{ModelSHA: sha, DeviceType: fmt.Sprintf("dev%d", w), Size: 1 + i%100, Batch: b,
						P50MS: float64(b), P99MS: float64(b), MeanMS: float64(b), Samples: i, Complete: true})
				}
				if err := s.PutLatency(ctx, pts); err != nil {
					fail(err)
				}
				if _, err := s.AppendEvent(ctx, Event{Kind: EventProfileJob, Message: fmt.Sprintf("w%d r%d", w, i)}); err != nil {
					fail(err)
				}
			}
		})
	}
	var reads atomic.Int64
	for range readers {
		readersWG.Go(func() {
			var lastCount int
			for {
				select {
				case <-done:
					return
				default:
				}
				evs, err := s.Events(ctx, 0, 0)
				if err != nil {
					fail(err)
					return
				}
				if len(evs) < lastCount {
					fail(fmt.Errorf("history shrank from %d to %d events", lastCount, len(evs)))
				}
				lastCount = len(evs)
				if pts, err := s.Latency(ctx, sha, "seed"); err != nil || len(pts) != 192 {
					fail(fmt.Errorf("read seeded profile: %d points: %w", len(pts), err))
				}
				if _, err := s.HasCompleteProfile(ctx, sha, "dev1", []int{1, 2}, []int{1, 2, 3}); err != nil {
					fail(err)
				}
				reads.Add(1)
			}
		})
	}
	writersWG.Wait()
	close(done)
	readersWG.Wait()

	require.Zero(t, failures.Load(), "first error: %v", firstErr)
	require.Positive(t, reads.Load())
	evs, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, writers*rounds)
}

// TestTwoStoresShareAFile opens the same file twice, as the daemon and a
// profile command in another process do, and writes from both at once: the
// busy timeout makes them wait for each other instead of failing.
func TestTwoStoresShareAFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuletd.db")
	a, err := Open(ctx, path)
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Close()) }()
	b, err := Open(ctx, path)
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()

	const each = 60
	errs := make(chan error, 2*each)
	var wg sync.WaitGroup
	for i, s := range []*Store{a, b} {
		wg.Go(func() {
			for j := range each {
				if _, err := s.AppendEvent(ctx, Event{Kind: EventReorganize, Message: fmt.Sprintf("store %d event %d", i, j)}); err != nil {
					errs <- err
				}
				if _, err := s.Events(ctx, 0, 5); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, s := range []*Store{a, b} {
		evs, err := s.Events(ctx, 0, 0)
		require.NoError(t, err)
		require.Len(t, evs, 2*each, "each store sees the other's writes")
	}
}
