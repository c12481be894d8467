package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/profiler/store"
)

// A state file that is no database stops the daemon with what to do.
func TestACorruptStoreSaysWhatToDo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpuletd.db")
	require.NoError(t, os.WriteFile(path, []byte("these bytes are no SQLite database, and there are enough of them to be read as a header: "+
		"0123456789012345678901234567890123456789"), 0o600))
	_, err := openStore(context.Background(), path, zap.NewNop())
	require.ErrorIs(t, err, store.ErrCorrupt)
	require.ErrorContains(t, err, path)
	require.ErrorContains(t, err, "move it aside and start again")
}

// A database another process holds locked past the busy timeout (a
// sqlite3 shell left inside BEGIN IMMEDIATE) stops the daemon with what to
// do, not with a read-only start.
func TestALockedStoreSaysWhatToDo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gpuletd.db")
	st, err := store.Open(context.Background(), path)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	testbin.HoldWriteLock(t, path)
	_, err = openStore(context.Background(), path, zap.NewNop())
	require.ErrorIs(t, err, store.ErrBusy)
	require.ErrorContains(t, err, path)
	require.ErrorContains(t, err, "end the write transaction of the process that holds the write lock")
}
