package dirlock

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
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

func TestHeld(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	held, err := Held(dir)
	require.NoError(t, err)
	require.False(t, held)
	require.NoDirExists(t, dir, "a look makes nothing")

	f, err := Lock(dir)
	require.NoError(t, err)
	held, err = Held(dir)
	require.NoError(t, err)
	require.True(t, held)
	require.NoError(t, f.Close())

	held, err = Held(dir)
	require.NoError(t, err)
	require.False(t, held)
	again, err := Lock(dir)
	require.NoError(t, err, "a look holds nothing after it")
	require.NoError(t, again.Close())
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

// Taken by root in a directory of the service's user (sudo gpuletd
// restore), the lock file goes to that user, who writes its ID there next.
func TestLockFileGoesToTheDirectorysOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root gives files away")
	}
	dir := t.TempDir()
	const nobody = 65534
	require.NoError(t, os.Chown(dir, nobody, nobody))
	f, err := Lock(dir)
	require.NoError(t, err)
	defer f.Close()
	fi, err := os.Stat(filepath.Join(dir, FileName))
	require.NoError(t, err)
	require.EqualValues(t, nobody, fi.Sys().(*syscall.Stat_t).Uid)
}

// A single file is held as a directory is, naming its holder, which stays
// named once the holder lets it go (or ends).
func TestLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "7.lock")
	held, holder, err := FileHolder(path)
	require.NoError(t, err)
	require.False(t, held)
	require.Empty(t, holder)

	f, err := LockFile(path, "gpuletd profile (pid 42)")
	require.NoError(t, err)
	_, err = LockFile(path, "another")
	require.ErrorIs(t, err, ErrInUse)
	held, holder, err = FileHolder(path)
	require.NoError(t, err)
	require.True(t, held)
	require.Equal(t, "gpuletd profile (pid 42)", holder, "a refused lock leaves the holder's name")

	require.NoError(t, f.Close())
	held, holder, err = FileHolder(path)
	require.NoError(t, err)
	require.False(t, held)
	require.Equal(t, "gpuletd profile (pid 42)", holder)
}
