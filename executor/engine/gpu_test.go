//go:build gpu

package engine

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/cudart"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// These tests need an NVIDIA GPU, its driver, the CUDA 13 libraries in the
// loader's path (LD_LIBRARY_PATH) and the GPU providers beside the core
// library (make deps-gpu): go test -tags gpu ./executor/engine/ (make
// test-gpu). They skip without a driver.

func requireGPU(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/driver/nvidia/version"); err != nil {
		t.Skip("no NVIDIA driver on this machine")
	}
}

// TestGPUCUDAMatchesCPU runs zoo models on the CUDA provider and on the CPU
// and compares the outputs.
func TestGPUCUDAMatchesCPU(t *testing.T) {
	requireGPU(t)
	initORT(t)
	gpu, err := NewORT(ORTOptions{Provider: ProviderCUDA, IntraOpThreads: 1, MemoryLimit: 4 << 30})
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
			want := runZoo(t, cpu, name, path)
			got := runZoo(t, gpu, name, path)
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

// runZoo runs one batch of four fixed requests and returns the first
// output of each, flattened.
func runZoo(t *testing.T, e *ORT, name, path string) []float32 {
	t.Helper()
	m, err := e.Load(context.Background(), ModelSpec{Name: name, Path: path, MaxBatchSize: 4})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	in := m.Inputs()[0]
	n, err := tensor.NumElements(in.Shape)
	require.NoError(t, err)
	var reqs [][]tensor.Tensor
	for r := range 4 {
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32((i*7+r*13)%31)/31 - 0.5
		}
		x, err := tensor.FromFloat32s(in.Name, append([]int64{1}, in.Shape...), vals)
		require.NoError(t, err)
		reqs = append(reqs, []tensor.Tensor{x})
	}
	outs, _, err := m.Run(context.Background(), reqs, nil)
	require.NoError(t, err)
	var flat []float32
	for _, o := range outs {
		v, err := o[0].Float32s()
		require.NoError(t, err)
		flat = append(flat, v...)
	}
	return flat
}
