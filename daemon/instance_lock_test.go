package daemon

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gpulet/gpuletd/internal/dirlock"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

func TestLockDirs(t *testing.T) {
	state := t.TempDir()
	runtime := filepath.Join(state, "run") // not there yet: made
	first, err := lockDirs(zap.NewNop(), lockedDir{"state_dir", state}, lockedDir{"runtime_dir", runtime})
	require.NoError(t, err)
	require.Len(t, first.files, 2)
	b, err := os.ReadFile(filepath.Join(runtime, dirlock.FileName))
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(os.Getpid())+"\n", string(b), "the holder is named for the next daemon's message")

	cases := []struct {
		name  string
		dirs  []lockedDir
		field string
	}{
		{"the same state_dir", []lockedDir{{"state_dir", state}, {"runtime_dir", t.TempDir()}}, "state_dir " + state},
		{"the same runtime_dir", []lockedDir{{"state_dir", t.TempDir()}, {"runtime_dir", runtime + "/"}}, "runtime_dir " + runtime},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// flock locks belong to an open file: a second open in this
			// process is refused as another process's would be.
			_, err := lockDirs(zap.NewNop(), tc.dirs...)
			require.ErrorIs(t, err, dirlock.ErrInUse)
			require.Contains(t, err.Error(), "lock "+tc.field+": ")
			require.Contains(t, err.Error(), "(pid "+strconv.Itoa(os.Getpid())+")")
			require.Contains(t, err.Error(), "a state_dir and a runtime_dir of its own")
		})
	}

	free := t.TempDir()
	_, err = lockDirs(zap.NewNop(), lockedDir{"state_dir", free}, lockedDir{"runtime_dir", state})
	require.ErrorIs(t, err, dirlock.ErrInUse)
	again, err := lockDirs(zap.NewNop(), lockedDir{"state_dir", free})
	require.NoError(t, err, "a refused daemon lets go of the directories it had locked before the one in use")
	again.release()

	first.release()
	second, err := lockDirs(zap.NewNop(), lockedDir{"state_dir", state}, lockedDir{"runtime_dir", state})
	require.NoError(t, err, "released, the directories can be held again")
	require.Len(t, second.files, 1, "a directory named twice is locked once")
	second.release()
}

func TestLockDirsPassesOverAnUnusableDirectory(t *testing.T) {
	// A regular file where the directory should be: no lock file can be
	// made there, and the daemon runs without the guard (the store says
	// what is wrong with its directory).
	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o600))
	l, err := lockDirs(zap.NewNop(), lockedDir{"state_dir", notDir}, lockedDir{"runtime_dir", t.TempDir()})
	require.NoError(t, err)
	require.Len(t, l.files, 1)
	l.release()
}
