package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/profiler/store"
)

// A restarted daemon reads no unchanged model file to find its digest: the
// digests are kept in its database, by what stat says of each file. One
// changed while no daemon ran is read again, and the digest of one gone is
// forgotten.
func TestCatalogKeepsDigestsAcrossRestarts(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"a", "b"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, name, "1"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name, "1", "model.onnx"), []byte("file "+name), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, name, "config.pbtxt"), []byte("platform: \"onnxruntime_onnx\"\nmax_batch_size: 4\n"), 0o644))
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	start := func() *catalog {
		t.Helper()
		c := newCatalog([]string{root}, testRepositoryOptions(time.Second), st, newEvents(st, zap.NewNop()), zap.NewNop())
		c.opts.Read = fixedReader
		c.keepDigests(ctx)
		_, err := c.scan(ctx, []string{config.StartupAll})
		require.NoError(t, err)
		return c
	}

	first := start()
	require.Equal(t, 2, first.opts.Digests.Computed(), "the first start reads both files")
	kept, err := st.FileDigests(ctx)
	require.NoError(t, err)
	require.Len(t, kept, 2)
	shaA := first.models["a"].SHA256

	second := start()
	require.Zero(t, second.opts.Digests.Computed(), "a restart reads neither")
	require.Equal(t, shaA, second.models["a"].SHA256)

	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "1", "model.onnx"), []byte("new weights"), 0o644))
	require.NoError(t, os.RemoveAll(filepath.Join(root, "b")))
	third := start()
	require.Equal(t, 1, third.opts.Digests.Computed(), "the changed file is read again")
	require.NotEqual(t, shaA, third.models["a"].SHA256)
	kept, err = st.FileDigests(ctx)
	require.NoError(t, err)
	require.Len(t, kept, 1, "the gone file's digest is forgotten")
	require.Equal(t, filepath.Join(root, "a", "1", "model.onnx"), kept[0].Path)
}
