package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// A runtime directory too deep for Unix socket paths sends executor
// sockets to a private temporary directory, removed at shutdown.
func TestDeepRuntimeDirUsesPrivateSocketDir(t *testing.T) {
	deep := filepath.Join(t.TempDir(), strings.Repeat("d", maxSocketPath))
	s := &supervisor{sockDir: deep, log: zap.NewNop(), running: map[string]*gpuletRun{}}
	p, err := s.socketPath()
	require.NoError(t, err)
	require.LessOrEqual(t, len(p), maxSocketPath)
	dir := filepath.Dir(p)
	require.DirExists(t, dir)
	require.NoError(t, s.retireAll(context.Background()))
	_, err = os.Stat(dir)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// A daemon killed while its executor sockets were in a private temporary
// directory cannot remove it; the next daemon on the same runtime
// directory does.
func TestStalePrivateSocketDirIsRemoved(t *testing.T) {
	deep := filepath.Join(t.TempDir(), strings.Repeat("d", maxSocketPath))
	killed := &supervisor{sockDir: deep, log: zap.NewNop(), running: map[string]*gpuletRun{}}
	p, err := killed.socketPath()
	require.NoError(t, err)
	stale := filepath.Dir(p)
	require.DirExists(t, stale)

	next := &supervisor{sockDir: deep, log: zap.NewNop(), running: map[string]*gpuletRun{}}
	p, err = next.socketPath()
	require.NoError(t, err)
	require.NoDirExists(t, stale)
	require.NotEqual(t, stale, filepath.Dir(p))
	require.NoError(t, next.retireAll(context.Background()))
	require.NoDirExists(t, filepath.Dir(p))
	require.NoFileExists(t, filepath.Join(deep, privateSockRecord))
}
