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
			data, release, err := b.ReadAll(context.Background(), "m", tc.r, tc.size, 0)
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
	_, _, err := b.ReadAll(context.Background(), "m", bytes.NewReader(make([]byte, 2<<20)), 2<<20, 0)
	require.ErrorIs(t, err, ErrOverBudget, "a body over the whole budget fails at once")
	require.Zero(t, b.InUse())

	_, _, err = b.ReadAll(context.Background(), "m", unknownLength{bytes.NewReader(make([]byte, 2<<20))}, -1, 0)
	require.ErrorIs(t, err, ErrOverBudget, "so does one that grows past it")
	require.Zero(t, b.InUse(), "what it had taken is given back")

	first, release, err := b.ReadAll(context.Background(), "m", bytes.NewReader(make([]byte, 600<<10)), 600<<10, 0)
	require.NoError(t, err)
	require.Len(t, first, 600<<10)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err = b.ReadAll(ctx, "m", bytes.NewReader(make([]byte, 600<<10)), 600<<10, 0)
	require.ErrorIs(t, err, ErrOverBudget, "a second that does not fit waits, then fails")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.EqualValues(t, 3, b.Refused())

	done := make(chan error, 1)
	go func() {
		_, rel, err := b.ReadAll(context.Background(), "m", bytes.NewReader(make([]byte, 600<<10)), 600<<10, 0)
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
	_, _, err := b.ReadAll(context.Background(), "m", io.MultiReader(bytes.NewReader([]byte("ab")), errReader{boom}), 10, 0)
	require.ErrorIs(t, err, boom)
	require.Zero(t, b.InUse())
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestLargeBodiesLeaveRoomForSmallOnes(t *testing.T) {
	b := NewBudget(16 << 20) // large: over 1 MiB each; together at most 12 MiB
	var releases []func()
	for range 4 {
		_, rel, err := b.ReadAll(context.Background(), "m", bytes.NewReader(make([]byte, 3<<20-1)), 3<<20-1, 0)
		require.NoError(t, err)
		releases = append(releases, rel)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, _, err := b.ReadAll(ctx, "m", bytes.NewReader(make([]byte, 3<<20)), 3<<20, 0)
	require.ErrorIs(t, err, ErrOverBudget, "large bodies fill at most three quarters")
	for _, owner := range []string{"m", "m", "a", "b"} {
		// 128 KiB: within one model's allowance of 256 KiB; 1 MiB: past it.
		size := int64(128<<10 - 1)
		if owner != "m" {
			size = 1<<20 - 1
		}
		_, rel, err := b.ReadAll(context.Background(), owner, bytes.NewReader(make([]byte, size)), size, 0)
		require.NoError(t, err, "a small body of %s still finds room", owner)
		releases = append(releases, rel)
	}
	for _, rel := range releases {
		rel()
	}
	require.Zero(t, b.InUse())
	_, rel, err := b.ReadAll(context.Background(), "m", unknownLength{bytes.NewReader(make([]byte, 5<<20))}, -1, 0)
	require.NoError(t, err, "a body of unknown length grows through small and large steps")
	rel()
	require.Zero(t, b.InUse())
}

// One model's flood of bodies that are not large each fills three quarters
// of the budget at most, beside the first sixty-fourth of it that any model
// may hold, so that a model holding little still finds room at once.
func TestAFloodingModelLeavesRoomForOthers(t *testing.T) {
	b := NewBudget(1 << 20) // allowance 16 KiB; bulk holdings together at most 768 KiB
	const body = 8 << 10
	var releases []func()
	for _, flooder := range []string{"vgg", "resnet18"} {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
			release, err := b.Hold(ctx, flooder, body)
			cancel()
			if err != nil {
				require.ErrorIs(t, err, ErrOverBudget)
				break
			}
			releases = append(releases, release)
		}
	}
	require.Equal(t, int64(768<<10+2*16<<10), b.InUse(), "each flooder's allowance and bulk's three quarters, no more")
	require.Equal(t, int64(768<<10+16<<10), b.Holds("vgg"), "vgg filled bulk")
	require.Equal(t, int64(16<<10), b.Holds("resnet18"), "resnet18 got its allowance beside it")
	require.Equal(t, map[string]int64{"vgg": 784 << 10, "resnet18": 16 << 10}, b.Owners())

	done, stop := context.WithCancel(context.Background())
	stop()
	for i := range 2 {
		release, err := b.Hold(done, "lenet5", body)
		require.NoError(t, err, "a quiet model's request %d is taken at once", i)
		releases = append(releases, release)
	}
	_, err := b.Hold(done, "vgg", body)
	require.ErrorIs(t, err, ErrOverBudget, "the flooder is not let into the room it left")

	for _, release := range releases {
		release()
	}
	require.Zero(t, b.InUse())
	require.Zero(t, b.Holds("vgg"))
	require.Empty(t, b.owners, "owners that hold nothing are forgotten")
	release, err := b.Hold(done, "vgg", 512<<10)
	require.NoError(t, err, "a flooder's bytes count as bulk only while it holds them")
	release()
}

func TestBudgetHold(t *testing.T) {
	b := NewBudget(1 << 20)
	release, err := b.Hold(context.Background(), "m", 600<<10)
	require.NoError(t, err)
	require.Equal(t, int64(600<<10), b.InUse())

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = b.Hold(ctx, "m", 600<<10)
	require.ErrorIs(t, err, ErrOverBudget, "no room before the wait ends")
	require.Equal(t, int64(1), b.Refused())

	release()
	release()
	require.Zero(t, b.InUse(), "release gives the bytes back once")
	done, stop := context.WithCancel(context.Background())
	stop()
	now, err := b.Hold(done, "m", 600<<10)
	require.NoError(t, err, "room that is free is taken even when the wait is over")
	now()
	again, err := b.Hold(context.Background(), "m", 600<<10)
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
			data, release, err := b.ReadAll(context.Background(), "m", http.MaxBytesReader(nil, io.NopCloser(tc.r), limit), tc.size, limit)
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

// Take never waits, even past the budget's size, and every acquisition
// then waits until what is held is back under it.
func TestBudgetTakeOverdraws(t *testing.T) {
	b := NewBudget(1 << 20)
	held, err := b.Hold(context.Background(), "m", 600<<10)
	require.NoError(t, err)
	taken := b.Take("m", 600<<10)
	require.Equal(t, int64(1200<<10), b.InUse(), "taken past the size")
	require.Equal(t, int64(1200<<10), b.Holds("m"))

	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = b.Hold(short, "other", 1)
	require.ErrorIs(t, err, ErrOverBudget, "a byte waits while the budget is overdrawn")

	got := make(chan error, 1)
	go func() {
		release, err := b.Hold(context.Background(), "other", 300<<10)
		if err == nil {
			release()
		}
		got <- err
	}()
	held()
	select {
	case err := <-got:
		t.Fatalf("300 KiB more found room beside the 600 KiB taken, where large holdings fill 768 KiB at most: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	taken()
	taken()
	require.NoError(t, <-got, "room once the overdraft is given back")
	require.Zero(t, b.InUse())
	require.Empty(t, b.Owners())
	require.Equal(t, int64(0), b.Holds("m"))
}
