//go:build gpu

package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
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

// TestGPUTensorRTOrItsFallback: the TensorRT provider either runs the model
// itself or, where TensorRT cannot be used (its libraries absent), the
// engine says so, names CUDA as the provider that runs, and CUDA's outputs
// match the CPU's. What the machine has decides which branch runs; both
// assert.
func TestGPUTensorRTOrItsFallback(t *testing.T) {
	requireGPU(t)
	initORT(t)
	trt, err := NewORT(ORTOptions{Provider: ProviderTensorRT, IntraOpThreads: 1, DisableSpinning: true, MemoryLimit: 4 << 30})
	require.NoError(t, err)
	defer func() { require.NoError(t, trt.Close()) }()
	info := trt.Info()
	if ferr := trt.Fallback(); ferr != nil {
		t.Logf("TensorRT cannot be used here: %v", ferr)
		require.ErrorIs(t, ferr, ErrProviderUnavailable)
		require.Equal(t, ProviderCUDA, info.Provider)
		require.Contains(t, info.Note, "tensorrt was asked for")
		var ml *MissingLibraryError
		if errors.As(ferr, &ml) {
			require.NotEmpty(t, ml.Fix)
			t.Logf("missing %s: %s", ml.Library, ml.Fix)
		}
	} else {
		t.Log("TensorRT runs here")
		require.Equal(t, ProviderTensorRT, info.Provider)
		require.Empty(t, info.Note)
	}
	path := zooModel(t, "mlp")
	want, err := FixedBatch(context.Background(), newCPU(t, 0), "mlp", path, 4)
	require.NoError(t, err)
	got, err := FixedBatch(context.Background(), trt, "mlp", path, 4)
	require.NoError(t, err)
	require.Equal(t, len(want), len(got))
	for i := range want {
		require.InDelta(t, want[i], got[i], 1e-2)
	}
}

// TestGPURunsFromOneThreadKeepMemory: the assumption behind the executor's
// worker running every batch on one OS thread. A model run 16 times from
// one thread keeps the device memory where its warm-up left it; run from 16
// threads at once (as goroutines land on the Go scheduler's threads), the
// CUDA provider's per-thread state grows it. The growth is logged, not
// asserted: it is ONNX Runtime's behaviour, not gpuletd's.
func TestGPURunsFromOneThreadKeepMemory(t *testing.T) {
	requireGPU(t)
	initORT(t)
	for _, threads := range []int{1, 16} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			eng, err := NewORT(ORTOptions{Provider: ProviderCUDA, IntraOpThreads: 1, DisableSpinning: true, FixedShapes: true})
			require.NoError(t, err)
			defer func() { require.NoError(t, eng.Close()) }()
			m, err := eng.Load(context.Background(), ModelSpec{Name: "resnet18", Path: zooModel(t, "resnet18"), MaxBatchSize: 8})
			require.NoError(t, err)
			defer func() { require.NoError(t, m.Close()) }()
			reqs := randomRequests(t, m.Inputs(), 8, rand.New(rand.NewPCG(1, 2)))
			_, _, err = m.Run(context.Background(), reqs, nil)
			require.NoError(t, err)
			before, err := cudart.Query("")
			require.NoError(t, err)
			const runs = 16
			errs := make([]error, runs)
			var start, wg sync.WaitGroup
			start.Add(1)
			for g := range threads {
				wg.Add(1)
				go func() {
					defer wg.Done()
					runtime.LockOSThread() // a thread of its own for each goroutine
					defer runtime.UnlockOSThread()
					start.Wait()
					for i := g; i < runs; i += threads {
						_, _, errs[i] = m.Run(context.Background(), reqs, nil)
					}
				}()
			}
			start.Done()
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			after, err := cudart.Query("")
			require.NoError(t, err)
			grew := before.MemoryFree - after.MemoryFree
			t.Logf("%d runs from %d threads took %d MiB more of the device", runs, threads, grew>>20)
			if threads == 1 {
				require.Less(t, grew, int64(256<<20))
			}
		})
	}
}
