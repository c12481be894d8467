package repository

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDigestCacheReadsUnchangedFilesOnce(t *testing.T) {
	dir := t.TempDir()
	path := writeSplitModel(t, dir, "model.onnx.data", 1)
	data := filepath.Join(dir, "model.onnx.data")
	c := NewDigestCache()
	digest := func() Digest {
		t.Helper()
		d, err := c.Digest(path, PlatformONNX)
		require.NoError(t, err)
		want, err := DigestFile(path, PlatformONNX)
		require.NoError(t, err)
		require.Equal(t, want, d, "the cache answers what a read does")
		return d
	}
	first := digest()
	require.Equal(t, 1, c.computed)
	digest()
	require.Equal(t, 1, c.computed, "nothing changed: not read again")

	// Other weights of the same size, the file's time put back: read again.
	st, err := os.Stat(data)
	require.NoError(t, err)
	b, err := os.ReadFile(data)
	require.NoError(t, err)
	b[len(b)-1] ^= 0xff
	require.NoError(t, os.WriteFile(data, b, 0o644))
	require.NoError(t, os.Chtimes(data, st.ModTime(), st.ModTime()))
	second := digest()
	require.Equal(t, 2, c.computed, "the weights changed: read again")
	require.NotEqual(t, first.SHA256, second.SHA256)

	// The model file touched: read again, the same digest.
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(path, later, later))
	require.Equal(t, second, digest())
	require.Equal(t, 3, c.computed)

	// The weights gone: the error, and nothing kept.
	require.NoError(t, os.Remove(data))
	_, err = c.Digest(path, PlatformONNX)
	require.ErrorContains(t, err, "which is missing")
	require.Empty(t, c.entries)
}

// What a cache kept, a new cache (a restarted daemon's) restores: it reads
// no unchanged file, and reads again one changed while it was away. An
// entry that does not decode is named and left out.
func TestDigestCacheKeepsAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	path := writeSplitModel(t, dir, "model.onnx.data", 1)
	var kept []KeptDigest
	first := NewDigestCache()
	first.Keep(func(k KeptDigest) { kept = append(kept, k) })
	want, err := first.Digest(path, PlatformONNX)
	require.NoError(t, err)
	_, err = first.Digest(path, PlatformONNX)
	require.NoError(t, err)
	require.Len(t, kept, 1, "kept once, when computed")
	require.Equal(t, path, kept[0].Path)
	require.Equal(t, PlatformONNX, kept[0].Platform)

	restarted := NewDigestCache()
	bad := KeptDigest{Path: "/gone/model.onnx", Platform: PlatformONNX, Entry: []byte("{not json")}
	err = restarted.Restore(append(kept, bad))
	require.ErrorContains(t, err, "restore digest of /gone/model.onnx")
	got, err := restarted.Digest(path, PlatformONNX)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Zero(t, restarted.computed, "restored: the files are not read")

	// Changed while no daemon ran: read again.
	data := filepath.Join(dir, "model.onnx.data")
	b, err := os.ReadFile(data)
	require.NoError(t, err)
	b[0] ^= 0xff
	require.NoError(t, os.WriteFile(data, b, 0o644))
	again := NewDigestCache()
	require.NoError(t, again.Restore(kept))
	got, err = again.Digest(path, PlatformONNX)
	require.NoError(t, err)
	require.Equal(t, 1, again.computed)
	require.NotEqual(t, want.SHA256, got.SHA256)
}
