package cudalibs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func touch(t *testing.T, dir, name string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	return p
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	// A CUDA 13 PyTorch install keeps each library in nvidia/<part>/lib.
	cudart := touch(t, filepath.Join(root, "site/nvidia/cuda_runtime/lib"), "libcudart.so.13")
	cublas := touch(t, filepath.Join(root, "site/nvidia/cublas/lib"), "libcublas.so.13")
	cublasLt := touch(t, filepath.Join(root, "site/nvidia/cublas/lib"), "libcublasLt.so.13")
	fromEnv := touch(t, filepath.Join(root, "env"), "libcurand.so.10")
	sys := touch(t, filepath.Join(root, "usr/local/cuda-13.0/lib64"), "libcudnn.so.9")
	// A configured directory wins over the cache.
	cache := map[string]string{"libcuda.so.1": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcudart.so.13": "/elsewhere/libcudart.so.13"}

	s := Search{
		Dirs:          []string{filepath.Join(root, "site/nvidia/*/lib"), filepath.Join(root, "missing")},
		LDLibraryPath: filepath.Join(root, "env"),
		Cache:         cache,
		System:        []string{filepath.Join(root, "usr/local/cuda-13.0/lib64")},
	}
	libs := Find(s)
	got := map[string]Lib{}
	for _, l := range libs {
		got[l.Name] = l
	}
	tests := []struct {
		name, path string
	}{
		{"libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"},
		{"libcudart.so.13", cudart},
		{"libcublas.so.13", cublas},
		{"libcublasLt.so.13", cublasLt},
		{"libcurand.so.10", fromEnv},
		{"libcudnn.so.9", sys},
		{"libnvinfer.so.10", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := got[tt.name]
			require.True(t, ok)
			require.Equal(t, tt.path, l.Path)
			require.Equal(t, tt.path, Path(tt.name, s), "one library looked for alone")
			require.Equal(t, tt.path != "", l.Found())
			if tt.path == "" {
				require.Contains(t, l.Fix, "TensorRT 10")
			} else {
				require.Empty(t, l.Fix)
			}
		})
	}

	lp := LoaderPath(s, "/already:"+filepath.Join(root, "env"))
	parts := strings.Split(lp, ":")
	require.Equal(t, []string{
		filepath.Join(root, "site/nvidia/cublas/lib"),
		filepath.Join(root, "site/nvidia/cuda_runtime/lib"),
		"/already",
		filepath.Join(root, "env"),
	}, parts)
}

func TestFix(t *testing.T) {
	for _, c := range []struct {
		name        string
		inContainer bool
		want        string
	}{
		{"libcublasLt.so.13", false, "CUDA 13 runtime"},
		{"libcudart.so.13", false, "onnxruntime.cuda_library_dirs"},
		{"libcudnn.so.9", false, "cuDNN 9"},
		{"libcuda.so.1", false, "install the NVIDIA driver"},
		{"libnvinfer.so.10", false, "TensorRT 10"},
		{"libfoo.so.2", false, "libfoo.so.2"},
		// In a container: how to run it, not what to install.
		{"libcuda.so.1", true, "docker run --gpus all"},
		{"libcudart.so.13", true, "base has no CUDA 13 runtime or cuDNN 9"},
		{"libcudnn.so.9", true, "cuDNN 9"},
		{"libnvinfer.so.10", true, "use provider cuda"},
		{"libfoo.so.2", true, "libfoo.so.2"},
	} {
		require.Contains(t, fixFor(c.name, c.inContainer), c.want, "%s in a container: %v", c.name, c.inContainer)
	}
}

func TestParseLoaderCache(t *testing.T) {
	out := "3 libs found in cache `/etc/ld.so.cache'\n" +
		"\tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.13\n" +
		"\tlibcudart.so.13 (libc6,x86-64) => /opt/other/libcudart.so.13\n" +
		"\tlibz.so.1 (libc6) => /usr/lib32/libz.so.1\n"
	require.Equal(t, map[string]string{"libcudart.so.13": "/usr/local/cuda/lib64/libcudart.so.13"}, ParseLoaderCache(out))
}
