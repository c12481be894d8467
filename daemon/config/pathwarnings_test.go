package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCUDALibraryDirsThatNameNoFolder: a cuda_library_dirs entry (path or
// pattern) that matches no folder warns, naming the entry, where it was set
// and what follows; one that matches a folder does not, nor does a pattern
// matching at least one.
func TestCUDALibraryDirsThatNameNoFolder(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"nvidia/cu13/lib", "nvidia/cudnn/lib"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "afile"), nil, 0o644))
	for _, tc := range []struct {
		name  string
		value string
		warn  string // "": no warning
	}{
		{"folder", filepath.Join(root, "nvidia/cu13/lib"), ""},
		{"pattern", filepath.Join(root, "nvidia/*/lib"), ""},
		{"pattern that matches nothing", filepath.Join(root, "python3.11/*/lib"),
			`onnxruntime.cuda_library_dirs[0] "` + filepath.Join(root, "python3.11/*/lib") + `" (from env GPULETD_ONNXRUNTIME_CUDA_LIBRARY_DIRS) names no folder on this machine, so it adds none`},
		{"missing folder", filepath.Join(root, "nvidia/cu12/lib"), "names no folder on this machine"},
		{"a file", filepath.Join(root, "afile"), "names no folder on this machine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Load("", []string{"GPULETD_ONNXRUNTIME_CUDA_LIBRARY_DIRS=" + tc.value})
			require.NoError(t, err, "a folder that is not there warns and does not stop")
			if tc.warn == "" {
				require.Empty(t, l.Warnings)
				return
			}
			require.Len(t, l.Warnings, 1)
			require.Contains(t, l.Warnings[0], tc.warn)
		})
	}

	file := filepath.Join(t.TempDir(), "gpuletd.yaml")
	require.NoError(t, os.WriteFile(file, []byte("onnxruntime:\n  cuda_library_dirs: ["+filepath.Join(root, "nvidia/*/lib")+", /nonexistent/lib]\n"), 0o644))
	l, err := Load(file, nil)
	require.NoError(t, err)
	require.Equal(t, []string{`onnxruntime.cuda_library_dirs[1] "/nonexistent/lib" (from file ` + file + `) names no folder on this machine, so it adds none: ` +
		"the CUDA libraries are found only where the loader finds them by itself (LD_LIBRARY_PATH, its cache, the usual CUDA folders)"}, l.Warnings)
}
