package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/cudalibs"
	"github.com/gpulet/gpuletd/executor/cudart"
)

// Without a CUDA runtime anywhere the loader looks, registering a CUDA
// region says what is missing and how to get it.
func TestOpenCUDAMemoryWithoutARuntime(t *testing.T) {
	if p := cudalibs.Path(cudart.Library, cudalibs.Search{}); p != "" {
		t.Skip("this machine has a CUDA runtime: " + p)
	}
	t.Setenv("LD_LIBRARY_PATH", "")
	_, err := openCUDAMemory(func() []string { return []string{t.TempDir()} })(0, make([]byte, cudart.HandleSize))
	require.ErrorContains(t, err, "libcudart.so.13")
	require.ErrorContains(t, err, "fix: install the CUDA 13 runtime libraries")
}
