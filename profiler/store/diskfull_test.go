package store

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDiskFull simulates a full disk with PRAGMA max_page_count: the write
// that does not fit fails with ErrDiskFull, leaves nothing of itself behind,
// and everything committed before stays readable and sound.
func TestDiskFull(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuletd.db")
	s, err := Open(ctx, path)
	require.NoError(t, err)
	var pages int
	require.NoError(t, s.w.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages))
	require.NoError(t, s.Close())

	s, err = Open(ctx, path, WithMaxPageCount(pages+4))
	require.NoError(t, err)
	var limit int
	require.NoError(t, s.w.QueryRowContext(ctx, "PRAGMA max_page_count").Scan(&limit))
	require.Equal(t, pages+4, limit)

	sha := shaOf("m")
	batch := func(dev string, n int) []LatencyPoint {
		pts := make([]LatencyPoint, 0, n)
		for i := range n {
			pts = append(pts, LatencyPoint{ModelSHA: sha, DeviceType: dev, Size: 1 + i%100, Batch: 1 + i/100,
				P50MS: 1 + float64(i), P99MS: math.NaN(), MeanMS: math.NaN(), Samples: i, Complete: true})
		}
		return pts
	}
	kept := batch("small", 10)
	require.NoError(t, s.PutLatency(ctx, kept))
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "before the disk filled"})
	require.NoError(t, err)

	err = s.PutLatency(ctx, batch("big", 5000))
	require.ErrorIs(t, err, ErrDiskFull)
	require.ErrorContains(t, err, "put 5000 latency points")

	_, err = s.Latency(ctx, sha, "big")
	require.ErrorIs(t, err, ErrNotFound, "a failed batch leaves nothing behind")
	got, err := s.Latency(ctx, sha, "small")
	require.NoError(t, err)
	require.Len(t, got, len(kept))
	var check string
	require.NoError(t, s.w.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check))
	require.Equal(t, "ok", check)

	// Small writes that fit still succeed on the same store.
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "after"})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	// Without the limit the file opens clean (Open runs quick_check) with the
	// committed rows, and takes the big batch.
	s, err = Open(ctx, path)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	evs, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	require.NoError(t, s.PutLatency(ctx, batch("big", 5000)))
}

// TestOpenOnFullDisk checks that a database that cannot even be created
// reports ErrDiskFull and the path.
func TestOpenOnFullDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpuletd.db")
	_, err := Open(context.Background(), path, WithMaxPageCount(2))
	require.ErrorIs(t, err, ErrDiskFull)
	require.ErrorContains(t, err, path)
	require.ErrorContains(t, err, fmt.Sprintf("apply migration %04d", 1))
}
