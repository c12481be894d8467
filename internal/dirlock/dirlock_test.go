package dirlock

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state") // not there yet: made
	require.Empty(t, Holder(dir))
	f, err := Lock(dir)
	require.NoError(t, err)
	require.Equal(t, " (pid "+strconv.Itoa(os.Getpid())+")", Holder(dir))

	// flock locks belong to an open file: a second open in this process
	// is refused as another process's would be.
	_, err = Lock(dir)
	require.ErrorIs(t, err, ErrInUse)

	require.NoError(t, f.Close())
	again, err := Lock(dir)
	require.NoError(t, err, "let go, the directory can be held again")
	require.NoError(t, again.Close())
	require.FileExists(t, filepath.Join(dir, FileName), "the lock file stays")
}

func TestHolderOfALockFileThatNamesNoProcess(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), []byte("garbage"), 0o600))
	require.Empty(t, Holder(dir))
	f, err := Lock(dir)
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, " (pid "+strconv.Itoa(os.Getpid())+")", Holder(dir), "the holder's ID replaces what was there")
}
