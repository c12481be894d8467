package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	require.NoError(t, Write(path, []byte("one"), 0o640))
	require.NoError(t, Write(path, []byte("two"), 0o640))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "two", string(got))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), info.Mode().Perm())

	// A write that cannot finish (the path is a directory) leaves the
	// directory as it was: no temporary file behind.
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d"), 0o750))
	require.Error(t, Write(filepath.Join(dir, "d"), []byte("x"), 0o640))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "f.json and d only")
}
