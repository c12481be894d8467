//go:build gpu

package engine

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/cudart"
)

// These tests need an NVIDIA GPU, its driver, the CUDA 13 libraries in the
// loader's path (LD_LIBRARY_PATH) and the GPU providers beside the core
// library (make deps-gpu): go test -tags gpu ./executor/engine/ (make
// test-gpu). They skip without a driver.

func requireGPU(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/proc/driver/nvidia/version"); err != nil {
		t.Skip("no NVIDIA driver on this machine")
	}
}

// TestGPUCUDAMatchesCPU runs zoo models on the CUDA provider, as executors
// on a GPU do (fixed shapes), and on the CPU and compares the outputs.
func TestGPUCUDAMatchesCPU(t *testing.T) {
	requireGPU(t)
	initORT(t)
	gpu, err := NewORT(ORTOptions{Provider: ProviderCUDA, IntraOpThreads: 1, DisableSpinning: true, FixedShapes: true, MemoryLimit: 4 << 30})
	require.NoError(t, err)
	defer func() { require.NoError(t, gpu.Close()) }()
	dev, err := cudart.Query("")
	require.NoError(t, err)
	require.Positive(t, dev.SMCount)
	t.Logf("CUDA device: %+v", dev)
	cpu := newCPU(t, 0)
	for _, name := range []string{"mlp", "lenet5", "resnet18"} {
		t.Run(name, func(t *testing.T) {
			path := zooModel(t, name)
			want, err := FixedBatch(context.Background(), cpu, name, path, 4)
			require.NoError(t, err)
			got, err := FixedBatch(context.Background(), gpu, name, path, 4)
			require.NoError(t, err)
			require.Equal(t, len(want), len(got))
			worst := 0.0
			for i := range want {
				scale := max(1, math.Abs(float64(want[i])))
				worst = max(worst, math.Abs(float64(want[i]-got[i]))/scale)
			}
			t.Logf("%s: largest relative difference %.2g", name, worst)
			require.Less(t, worst, 1e-2)
		})
	}
}
