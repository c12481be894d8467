package onnxrt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFindLibraryFindsDevCopy(t *testing.T) {
	t.Setenv(EnvLibrary, "")
	path, err := FindLibrary("")
	require.NoError(t, err)
	require.True(t, filepath.IsAbs(path))
	require.Equal(t, LibraryName, filepath.Base(path))
	require.Equal(t, "onnxruntime", filepath.Base(filepath.Dir(path)))
}

func TestFinder(t *testing.T) {
	root := t.TempDir()
	touch := func(rel string) string {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("lib"), 0o644))
		return p
	}
	configured := touch("etc/custom/libonnxruntime.so")
	fromEnv := touch("env/libonnxruntime.so.1")
	installed := touch("usr/lib/gpuletd/" + LibraryName)      // exe in usr/bin
	release := touch("dist/.deps/onnxruntime/" + LibraryName) // exe in dist/bin
	beside := touch("opt/gpuletd/" + LibraryName)             // exe in opt/gpuletd
	checkout := touch("src/.deps/onnxruntime/" + LibraryName)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "src/pkg/sub"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "usr/bin"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dist/bin"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "empty/bin"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "nowhere/deep"), 0o755))

	tests := []struct {
		name    string
		f       finder
		want    string
		wantErr string // substring of the one-line error
	}{
		{name: "configured wins", f: finder{configured: configured, env: fromEnv, exeDir: filepath.Join(root, "usr/bin"), workDir: filepath.Join(root, "src")}, want: configured},
		{name: "env next", f: finder{env: fromEnv, exeDir: filepath.Join(root, "usr/bin")}, want: fromEnv},
		{name: "installed beside exe", f: finder{exeDir: filepath.Join(root, "usr/bin"), workDir: filepath.Join(root, "src")}, want: installed},
		{name: "release deps beside exe", f: finder{exeDir: filepath.Join(root, "dist/bin")}, want: release},
		{name: "same dir as exe", f: finder{exeDir: filepath.Join(root, "opt/gpuletd")}, want: beside},
		{name: "walk up from working dir", f: finder{exeDir: filepath.Join(root, "empty/bin"), workDir: filepath.Join(root, "src/pkg/sub")}, want: checkout},
		{name: "working dir itself", f: finder{workDir: filepath.Join(root, "src")}, want: checkout},
		{name: "configured missing", f: finder{configured: filepath.Join(root, "missing.so"), env: fromEnv},
			wantErr: `onnxruntime library not found: onnxruntime.library "` + filepath.Join(root, "missing.so") + `" does not exist`},
		{name: "env missing", f: finder{env: filepath.Join(root, "gone.so"), workDir: filepath.Join(root, "src")},
			wantErr: `onnxruntime library not found: GPULETD_ONNXRUNTIME_LIBRARY "` + filepath.Join(root, "gone.so") + `" does not exist`},
		{name: "configured directory", f: finder{configured: filepath.Join(root, "etc")},
			wantErr: `is a directory`},
		{name: "nothing anywhere", f: finder{exeDir: filepath.Join(root, "empty/bin"), workDir: filepath.Join(root, "nowhere/deep")},
			wantErr: `onnxruntime library not found: run "make deps" or set onnxruntime.library (GPULETD_ONNXRUNTIME_LIBRARY) to libonnxruntime.so.1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.f.find()
			if tt.wantErr != "" {
				require.ErrorIs(t, err, ErrLibraryNotFound)
				require.Contains(t, err.Error(), tt.wantErr)
				require.NotContains(t, err.Error(), "\n")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestFinderNothingMessageIsExact(t *testing.T) {
	_, err := finder{workDir: t.TempDir()}.find()
	require.EqualError(t, err, `onnxruntime library not found: run "make deps" or set onnxruntime.library (GPULETD_ONNXRUNTIME_LIBRARY) to libonnxruntime.so.1`)
	require.Equal(t, 1, len(strings.Split(err.Error(), "\n")))
}
