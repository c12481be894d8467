package store

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// limitFileSize makes every file this process writes stop at bytes, as a
// full disk does, until the returned function lifts it.
func limitFileSize(t *testing.T, bytes uint64) (lift func()) {
	t.Helper()
	var old syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old))
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: bytes, Max: old.Max}))
	lifted := false
	lift = func() {
		if !lifted {
			lifted = true
			require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old))
		}
	}
	t.Cleanup(lift)
	return lift
}

// TestReadOnlyFallbackAndRecover opens a database on a "disk" that takes no
// more bytes: with the fallback it opens read-only (without it, it fails),
// reads work, writes fail with ErrReadOnly, and once the disk takes bytes
// again Recover makes it writable and its readers see new writes.
func TestReadOnlyFallbackAndRecover(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuletd.db")
	s, err := Open(ctx, path)
	require.NoError(t, err)
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "before the disk filled"})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	lift := limitFileSize(t, 4096)
	_, err = Open(ctx, path)
	require.Error(t, err, "without the fallback an unwritable database does not open")
	require.True(t, Unwritable(err), "%v", err)

	s, err = Open(ctx, path, WithReadOnlyFallback())
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	ok, why := s.Writable()
	require.False(t, ok)
	require.True(t, Unwritable(why), "%v", why)
	evs, err := s.Events(ctx, 0, 0)
	require.NoError(t, err, "what is stored is read")
	require.Len(t, evs, 1)
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "while full"})
	require.ErrorIs(t, err, ErrReadOnly)
	require.Error(t, s.Recover(ctx), "still full")
	require.GreaterOrEqual(t, s.WriteFailures(), int64(2))

	lift()
	require.NoError(t, s.Recover(ctx))
	ok, why = s.Writable()
	require.True(t, ok, "%v", why)
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "after"})
	require.NoError(t, err)
	evs, err = s.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, 2, "the new readers see new writes")
	require.NoError(t, s.Recover(ctx), "recovering a writable store does nothing")
}

// TestWritesThatFailMarkTheStoreUnwritable: a write the disk cannot take
// marks the store unwritable with the reason; the next write that succeeds
// clears it.
func TestWritesThatFailMarkTheStoreUnwritable(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "gpuletd.db"))
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "x"})
	require.NoError(t, err)

	lift := limitFileSize(t, 4096)
	big := make([]byte, 64<<10)
	for i := range big {
		big[i] = 'a' + byte(i%26)
	}
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: string(big)})
	require.True(t, Unwritable(err), "%v", err)
	ok, why := s.Writable()
	require.False(t, ok)
	require.ErrorIs(t, why, err)
	require.EqualValues(t, 1, s.WriteFailures())

	lift()
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "room again"})
	require.NoError(t, err)
	ok, _ = s.Writable()
	require.True(t, ok)
}
