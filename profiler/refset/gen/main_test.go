package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/stretchr/testify/require"
)

func TestRunWritesTheEmbeddedFiles(t *testing.T) {
	const shared = "../../../../shared/data"
	if _, err := os.Stat(shared); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s is absent", shared)
	}
	out := t.TempDir()
	require.NoError(t, run(shared, "..", out))
	for _, name := range refset.Names() {
		got, err := os.ReadFile(filepath.Join(out, name+".ref"))
		require.NoError(t, err)
		want, err := refset.Embedded(name)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), name)
	}
}

func TestRunWithoutSources(t *testing.T) {
	err := run(t.TempDir(), t.TempDir(), t.TempDir())
	require.ErrorIs(t, err, fs.ErrNotExist)
}
