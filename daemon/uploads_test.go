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

func TestUploadPath(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "1/model.onnx", want: filepath.FromSlash("1/model.onnx")},
		{in: "12/sub/weights.bin", want: filepath.FromSlash("12/sub/weights.bin")},
		{in: "labels.txt", want: "labels.txt"},
		{in: "initial_state/acc0", want: filepath.FromSlash("initial_state/acc0")},
		{in: "warmup/sample", want: filepath.FromSlash("warmup/sample")},
		{in: "1/", err: "not a file in a version folder"},
		{in: "config.pbtxt", err: "the configuration comes in the config parameter"},
		{in: "1/../../etc/passwd", err: "not a file in a version folder"},
		{in: "/1/model.onnx", err: "not a file in a version folder"},
		{in: "1//model.onnx", err: "not a file in a version folder"},
		{in: `1\model.onnx`, err: "not a file in a version folder"},
		{in: "v1/model.onnx", err: `"v1" is not a version number`},
		{in: "01/model.onnx", err: `"01" is not a version number`},
	} {
		got, err := uploadPath(tc.in)
		if tc.err != "" {
			require.ErrorIs(t, err, errUploadPath, tc.in)
			require.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got)
	}
}

func TestLoadRequestParameters(t *testing.T) {
	for _, tc := range []struct {
		name  string
		key   string
		text  string
		data  []byte
		err   string
		check string // the error of check() once the parameter is in
	}{
		{name: "config", key: "config", text: "{}"},
		{name: "file", key: "file:1/model.onnx", data: []byte("onnx"), check: "configuration must come with them"},
		{name: "empty file", key: "file:1/model.onnx", err: "is empty"},
		{name: "bad path", key: "file:../model.onnx", data: []byte("onnx"), err: "not a file in a version folder"},
		{name: "unknown", key: "unload_dependents", err: `parameter "unload_dependents" is not supported; gpuletd reads config`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lr loadRequest
			ierr := lr.addParameter(tc.key, tc.text, tc.data)
			if tc.err != "" {
				require.NotNil(t, ierr)
				require.Equal(t, 400, ierr.code)
				require.Contains(t, ierr.msg, tc.err)
				return
			}
			require.Nil(t, ierr)
			if tc.check == "" {
				require.Nil(t, lr.check())
				return
			}
			require.Contains(t, lr.check().msg, tc.check)
			require.Nil(t, lr.addParameter("config", "{}", nil))
			require.Nil(t, lr.check())
		})
	}
}

// TestCatalogServesUploadedFolder loads a model from uploaded files beside
// a repository that has a folder of the same name, lists it in the index,
// loads the repository's again and unloads, removing the uploads.
func TestCatalogServesUploadedFolder(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"m", "other"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, name, "1"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name, "1", "model.onnx"), []byte("repository's"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, name, "config.yaml"), []byte("slo: 10ms\nmax_batch_size: 4\n"), 0o644))
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	c := newCatalog([]string{root}, testRepositoryOptions(time.Second), st, newEvents(st, zap.NewNop()), zap.NewNop())
	c.opts.Read = fixedReader
	_, err = c.scan(context.Background(), []string{config.StartupAll})
	require.NoError(t, err)
	up, err := newUploads(filepath.Join(t.TempDir(), "uploads"))
	require.NoError(t, err)

	config := []byte(`{"max_batch_size": 2, "parameters": {"slo": {"string_value": "30ms"}}}`)
	first, err := up.write("m", map[string][]byte{filepath.FromSlash("4/model.onnx"): []byte("uploaded")})
	require.NoError(t, err)
	m, replaced, err := c.load(context.Background(), "m", config, first, nil)
	require.NoError(t, err)
	require.Empty(t, replaced)
	require.Equal(t, 4, m.Version)
	require.Equal(t, filepath.Join(first, "m", "4", "model.onnx"), m.File)
	require.Equal(t, 30*time.Millisecond, m.Config.SLO.D())
	entries, err := c.indexEntries(context.Background())
	require.NoError(t, err)
	require.Equal(t, []repoEntry{
		{Name: "m", Version: "4", State: "READY", version: 4},
		{Name: "other", Version: "1", State: "READY", version: 1},
	}, entries, "the upload stands in for the repository's folder")

	// Files again: the first upload is replaced, and the caller removes it.
	second, err := up.write("m", map[string][]byte{filepath.FromSlash("5/model.onnx"): []byte("uploaded again")})
	require.NoError(t, err)
	_, replaced, err = c.load(context.Background(), "m", config, second, nil)
	require.NoError(t, err)
	require.Equal(t, first, replaced)
	up.drop(replaced)
	require.NoDirExists(t, first)

	// A load without files reads the repository's folder again.
	m, replaced, err = c.load(context.Background(), "m", nil, "", nil)
	require.NoError(t, err)
	require.Equal(t, second, replaced)
	require.Equal(t, filepath.Join(root, "m", "1", "model.onnx"), m.File)

	// An upload's unload hands its root back; the repository's does not.
	third, err := up.write("m", map[string][]byte{filepath.FromSlash("2/model.onnx"): []byte("uploaded")})
	require.NoError(t, err)
	_, _, err = c.load(context.Background(), "m", config, third, nil)
	require.NoError(t, err)
	uploaded, err := c.unload("m")
	require.NoError(t, err)
	require.Equal(t, third, uploaded)
	uploaded, err = c.unload("other")
	require.NoError(t, err)
	require.Empty(t, uploaded)

	// A new daemon clears what an earlier one uploaded.
	_, err = newUploads(up.dir)
	require.NoError(t, err)
	require.NoDirExists(t, third)
}

func TestUploadedPaths(t *testing.T) {
	root := filepath.Join("/state", "uploads", "m.3")
	for _, tc := range []struct{ root, in, want string }{
		{root, "invalid model: " + filepath.Join(root, "m", "1", "model.onnx") + ": invalid onnx model: proto: bad",
			"invalid model: uploaded 1/model.onnx: invalid onnx model: proto: bad"},
		{root, "invalid model: " + filepath.Join(root, "m") + ": no version folder",
			"invalid model: the uploaded folder: no version folder"},
		{"", "invalid model: /repo/m/1/model.onnx: bad", "invalid model: /repo/m/1/model.onnx: bad"},
	} {
		require.Equal(t, tc.want, uploadedPaths(tc.in, tc.root, "m"))
	}
}

// TestUploadThatCannotBeWrittenLeavesNothing stands in for a full disk: the
// folder of the upload cannot be made, the write fails naming the file, and
// nothing of it is left.
func TestUploadThatCannotBeWrittenLeavesNothing(t *testing.T) {
	up, err := newUploads(filepath.Join(t.TempDir(), "uploads"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(up.dir, "m.1"), nil, 0o600)) // where the first upload's folder goes
	_, err = up.write("m", map[string][]byte{filepath.FromSlash("1/model.onnx"): []byte("onnx")})
	require.ErrorContains(t, err, "write uploaded file 1/model.onnx")
	entries, err := os.ReadDir(up.dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the failed upload is removed")
	for _, bad := range []string{"..", ".", "a/b", ""} {
		_, err = up.write(bad, map[string][]byte{filepath.FromSlash("1/model.onnx"): []byte("onnx")})
		require.ErrorContains(t, err, "is not a folder name", bad)
	}
	root, err := up.write("m", map[string][]byte{filepath.FromSlash("1/model.onnx"): []byte("onnx")})
	require.NoError(t, err, "the next upload goes elsewhere")
	require.FileExists(t, filepath.Join(root, "m", "1", "model.onnx"))
}
