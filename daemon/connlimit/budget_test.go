package connlimit

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// unknownLength hides a reader's length (a chunked body).
type unknownLength struct{ r io.Reader }

func (u unknownLength) Read(p []byte) (int, error) { return u.r.Read(p) }

func TestBudgetReadAll(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 700<<10)
	tests := []struct {
		name string
		r    io.Reader
		size int64
		held int64 // bytes held until release
	}{
		{"known length", bytes.NewReader(body), int64(len(body)), int64(len(body)) + 1},
		{"unknown length grows by doubling", unknownLength{bytes.NewReader(body)}, -1, 1 << 20},
		{"empty", bytes.NewReader(nil), 0, 1},
		// A decompressed body's length is a guess: past it the buffer grows
		// as for a body of unknown length (10 KiB + 1, then 256 KiB, then
		// doubling).
		{"longer than its guessed length", unknownLength{bytes.NewReader(body)}, 10 << 10, 1 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBudget(4 << 20)
			data, release, err := b.ReadAll(context.Background(), tc.r, tc.size, 0)
			require.NoError(t, err)
			require.Equal(t, len(body)*int(boolInt(tc.size != 0)), len(data))
			require.Equal(t, tc.held, b.InUse())
			release()
			release()
			require.Zero(t, b.InUse())
		})
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func TestBudgetRefusesWhatDoesNotFit(t *testing.T) {
	b := NewBudget(1 << 20)
	_, _, err := b.ReadAll(context.Background(), bytes.NewReader(make([]byte, 2<<20)), 2<<20, 0)
	require.ErrorIs(t, err, ErrOverBudget, "a body over the whole budget fails at once")
	require.Zero(t, b.InUse())

	_, _, err = b.ReadAll(context.Background(), unknownLength{bytes.NewReader(make([]byte, 2<<20))}, -1, 0)
	require.ErrorIs(t, err, ErrOverBudget, "so does one that grows past it")
	require.Zero(t, b.InUse(), "what it had taken is given back")

	first, release, err := b.ReadAll(context.Background(), bytes.NewReader(make([]byte, 600<<10)), 600<<10, 0)
	require.NoError(t, err)
	require.Len(t, first, 600<<10)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err = b.ReadAll(ctx, bytes.NewReader(make([]byte, 600<<10)), 600<<10, 0)
	require.ErrorIs(t, err, ErrOverBudget, "a second that does not fit waits, then fails")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.EqualValues(t, 3, b.Refused())

	done := make(chan error, 1)
	go func() {
		_, rel, err := b.ReadAll(context.Background(), bytes.NewReader(make([]byte, 600<<10)), 600<<10, 0)
		rel()
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	release()
	require.NoError(t, <-done, "it gets in once the first is released")
	require.Zero(t, b.InUse())
}

func TestBudgetReadError(t *testing.T) {
	b := NewBudget(1 << 20)
	boom := errors.New("boom")
	_, _, err := b.ReadAll(context.Background(), io.MultiReader(bytes.NewReader([]byte("ab")), errReader{boom}), 10, 0)
	require.ErrorIs(t, err, boom)
	require.Zero(t, b.InUse())
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestLargeBodiesLeaveRoomForSmallOnes(t *testing.T) {
	b := NewBudget(16 << 20) // large: over 1 MiB each; together at most 12 MiB
	var releases []func()
	for range 4 {
		_, rel, err := b.ReadAll(context.Background(), bytes.NewReader(make([]byte, 3<<20-1)), 3<<20-1, 0)
		require.NoError(t, err)
		releases = append(releases, rel)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, _, err := b.ReadAll(ctx, bytes.NewReader(make([]byte, 3<<20)), 3<<20, 0)
	require.ErrorIs(t, err, ErrOverBudget, "large bodies fill at most three quarters")
	for range 3 {
		_, rel, err := b.ReadAll(context.Background(), bytes.NewReader(make([]byte, 1<<20-1)), 1<<20-1, 0)
		require.NoError(t, err, "a small body still finds room")
		releases = append(releases, rel)
	}
	for _, rel := range releases {
		rel()
	}
	require.Zero(t, b.InUse())
	_, rel, err := b.ReadAll(context.Background(), unknownLength{bytes.NewReader(make([]byte, 5<<20))}, -1, 0)
	require.NoError(t, err, "a body of unknown length grows through small and large steps")
	rel()
	require.Zero(t, b.InUse())
}

func TestBudgetHold(t *testing.T) {
	b := NewBudget(1 << 20)
	release, err := b.Hold(context.Background(), 600<<10)
	require.NoError(t, err)
	require.Equal(t, int64(600<<10), b.InUse())

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = b.Hold(ctx, 600<<10)
	require.ErrorIs(t, err, ErrOverBudget, "no room before the wait ends")
	require.Equal(t, int64(1), b.Refused())

	release()
	release()
	require.Zero(t, b.InUse(), "release gives the bytes back once")
	done, stop := context.WithCancel(context.Background())
	stop()
	now, err := b.Hold(done, 600<<10)
	require.NoError(t, err, "room that is free is taken even when the wait is over")
	now()
	again, err := b.Hold(context.Background(), 600<<10)
	require.NoError(t, err, "room again")
	again()
}

func TestABodyUpToMaxBodyFitsAnEmptyBudget(t *testing.T) {
	b := NewBudget(4 << 20)
	limit := b.MaxBody()
	require.Equal(t, int64(3<<20-1), limit)
	tests := []struct {
		name   string
		r      io.Reader
		size   int64
		tooBig bool
	}{
		{name: "a known length at the limit", r: bytes.NewReader(make([]byte, limit)), size: limit},
		{name: "an unknown length at the limit: the doubling stops at the limit",
			r: unknownLength{bytes.NewReader(make([]byte, limit))}, size: -1},
		{name: "an unknown length over the limit", r: unknownLength{bytes.NewReader(make([]byte, limit+1))}, size: -1, tooBig: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, release, err := b.ReadAll(context.Background(), http.MaxBytesReader(nil, io.NopCloser(tc.r), limit), tc.size, limit)
			defer release()
			if tc.tooBig {
				var tooBig *http.MaxBytesError
				require.ErrorAs(t, err, &tooBig)
				require.Zero(t, b.InUse())
				return
			}
			require.NoError(t, err)
			require.Len(t, data, int(limit))
			require.Equal(t, limit+1, b.InUse())
		})
	}
}
