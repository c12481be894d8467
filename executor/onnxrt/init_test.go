package onnxrt

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBeforeInit(t *testing.T) {
	require.ErrorIs(t, fresh.readBeforeInit, ErrNotInitialized)
}

func TestInitBadLibraryIsOneLineNamingPath(t *testing.T) {
	err := fresh.badInitErr
	require.ErrorIs(t, err, ErrLibraryLoad)
	require.Equal(t, 1, strings.Count(err.Error(), fresh.badLibrary), "path named once: %v", err)
	require.NotContains(t, err.Error(), "\n")
	require.False(t, fresh.loadedAfterBad, "a failed Init must leave nothing loaded")
}

func TestInitMissingPath(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope", LibraryName)
	err := Init(missing)
	require.ErrorIs(t, err, ErrLibraryNotFound)
	require.Contains(t, err.Error(), missing)
	require.NotContains(t, err.Error(), "\n")
	require.ErrorIs(t, Init(""), ErrLibraryNotFound)
}

func TestInitOnceConcurrent(t *testing.T) {
	path, err := FindLibrary("")
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = Init(path) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	loaded, ok := Library()
	require.True(t, ok)
	resolved, err := filepath.EvalSymlinks(path)
	require.NoError(t, err)
	require.Equal(t, resolved, loaded)
	require.True(t, strings.HasPrefix(Version(), "1."), "version %q", Version())

	// The same library through a symlink is the same library.
	link := filepath.Join(t.TempDir(), LibraryName)
	require.NoError(t, os.Symlink(path, link))
	require.NoError(t, Init(link))

	// Another file is refused, and the loaded library stays.
	err = Init(fresh.badLibrary)
	require.ErrorIs(t, err, ErrAlreadyInitialized)
	require.Contains(t, err.Error(), fresh.badLibrary)
	again, _ := Library()
	require.Equal(t, loaded, again)
}
