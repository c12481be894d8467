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
