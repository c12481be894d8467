package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/testbin"
)

func TestLockPIDs(t *testing.T) {
	const db, shm, self = 501, 502, 77
	tests := []struct {
		name  string
		locks string
		want  []int
	}{
		{"a writer in WAL mode", "1: POSIX  ADVISORY  WRITE 4242 fd:01:502 120 120\n", []int{4242}},
		{"a writer's lock over a range", "1: POSIX  ADVISORY  WRITE 4242 fd:01:502 100 EOF\n", []int{4242}},
		{"readers' marks are not the write lock", "1: POSIX  ADVISORY  WRITE 4242 fd:01:502 123 123\n2: POSIX  ADVISORY  READ  4243 fd:01:502 120 120\n", nil},
		{"any write lock on the database file", "1: POSIX  ADVISORY  WRITE 4242 00:2f:501 1073741824 1073741825\n", []int{4242}},
		{"this process and other files", "1: POSIX  ADVISORY  WRITE 77 fd:01:502 120 120\n2: POSIX  ADVISORY  WRITE 9 fd:01:999 120 120\n", nil},
		{"waiters and description locks", "1: POSIX  ADVISORY  WRITE 4242 fd:01:502 120 120\n1: -> POSIX  ADVISORY  WRITE 5151 fd:01:502 120 120\n2: OFDLCK ADVISORY  WRITE -1 fd:01:501 0 EOF\n", []int{4242}},
		{"each process once, in order", "1: POSIX  ADVISORY  WRITE 9 fd:01:501 0 EOF\n2: POSIX  ADVISORY  WRITE 4242 fd:01:502 120 120\n3: POSIX  ADVISORY  WRITE 9 fd:01:502 120 120\n", []int{9, 4242}},
		{"malformed lines", "garbage\n1: POSIX ADVISORY WRITE x fd:01:502 120 120\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, lockPIDs([]byte(tc.locks), db, shm, self))
		})
	}
}

// TestBusyStoreSaysWhoHoldsItAndRecovers holds the database's write lock
// in a sqlite3 shell: a write fails with ErrBusy naming that process,
// the store is unwritable, writes keep failing at once until Recover finds
// the lock free, and a database so locked does not open read-only.
func TestBusyStoreSaysWhoHoldsItAndRecovers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gpuletd.db")
	s, err := Open(ctx, path, WithBusyTimeout(200*time.Millisecond))
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "before the lock"})
	require.NoError(t, err)

	var pid int
	t.Run("locked", func(t *testing.T) { // the shell lets the lock go as it ends
		pid = testbin.HoldWriteLock(t, path)
		holder := fmt.Sprintf("its write lock is held by pid %d (sqlite3)", pid)
		_, err := s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "while locked"})
		require.ErrorIs(t, err, ErrBusy)
		require.True(t, Unwritable(err))
		require.Contains(t, err.Error(), holder)
		ok, why := s.Writable()
		require.False(t, ok)
		require.ErrorIs(t, why, ErrBusy)
		evs, err := s.Events(ctx, 0, 0)
		require.NoError(t, err, "reads go on")
		require.Len(t, evs, 1)
		err = s.Recover(ctx)
		require.ErrorIs(t, err, ErrBusy, "the lock is still held")
		require.Contains(t, err.Error(), holder)

		_, err = Open(ctx, path, WithReadOnlyFallback(), WithBusyTimeout(200*time.Millisecond))
		require.ErrorIs(t, err, ErrBusy, "a locked database does not open read-only")
		require.Contains(t, err.Error(), holder)
	})

	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "just after"})
	require.ErrorIs(t, err, ErrBusy, "writes rest after the lock was found held, without trying it")
	require.Contains(t, err.Error(), fmt.Sprintf("its write lock was held by pid %d (sqlite3)", pid))
	failures := s.WriteFailures()
	require.GreaterOrEqual(t, failures, int64(3))
	require.NoError(t, s.Recover(ctx))
	ok, _ := s.Writable()
	require.True(t, ok)
	_, err = s.AppendEvent(ctx, Event{Kind: EventConfigReload, Message: "after"})
	require.NoError(t, err)
	require.Equal(t, failures, s.WriteFailures())
	evs, err := s.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, 2)
}
