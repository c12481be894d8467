package profiler

import (
	"context"
	"fmt"

	"github.com/gpulet/gpuletd/executor/cudart"
	"github.com/gpulet/gpuletd/executor/engine"
	"github.com/gpulet/gpuletd/executor/onnxrt"
)

// SoloRun is the process Nsight Compute profiles (`gpuletd profile
// --ncu-target`): one model, alone in its process, warming up with one batch
// and then running Runs batches of Batch zero-filled rows and exiting. On the
// GPU providers only the Runs batches lie inside the CUDA profiler range
// (cudaProfilerStart/Stop), so a profiler started with
// `--profile-from-start off` leaves out the load and the warm-up, whose
// convolution algorithm search launches hundreds of kernels that would each
// be replayed.
type SoloRun struct {
	Path string
	// Batch is the rows per batch; MaxBatchSize 0 runs a model without
	// batch dimension (Batch must then be 1).
	Batch, Runs  int
	MaxBatchSize int
	// Provider is the onnxruntime execution provider (default cuda).
	Provider string
	// Library is the ONNX Runtime library; empty: searched for.
	Library string
}

// RunSolo runs o in this process.
func RunSolo(ctx context.Context, o SoloRun) error {
	if o.Path == "" || o.Batch < 1 || o.Runs < 1 {
		return fmt.Errorf("solo run: %w: need a model file, a batch ≥ 1 and runs ≥ 1", ErrBadJob)
	}
	if o.MaxBatchSize == 0 && o.Batch != 1 {
		return fmt.Errorf("solo run of %s: %w: batch %d of a model without batch dimension", o.Path, ErrBadJob, o.Batch)
	}
	lib, err := onnxrt.FindLibrary(o.Library)
	if err != nil {
		return fmt.Errorf("solo run of %s: %w", o.Path, err)
	}
	if err := onnxrt.Init(lib); err != nil {
		return fmt.Errorf("solo run of %s: %w", o.Path, err)
	}
	provider := o.Provider
	if provider == "" {
		provider = engine.ProviderCUDA
	}
	eng, err := engine.NewORT(engine.ORTOptions{Provider: provider, DeviceName: "solo"})
	if err != nil {
		return fmt.Errorf("solo run of %s: %w", o.Path, err)
	}
	defer eng.Close()
	maxB := 0
	if o.MaxBatchSize > 0 {
		maxB = o.Batch
	}
	m, err := eng.Load(ctx, engine.ModelSpec{Name: "solo", Path: o.Path, MaxBatchSize: maxB})
	if err != nil {
		return fmt.Errorf("solo run of %s: %w: %w", o.Path, ErrModelLoad, err)
	}
	defer m.Close()
	if _, err := m.Warmup(ctx, []int{o.Batch}); err != nil {
		return fmt.Errorf("solo run of %s: %w: %w", o.Path, ErrModelLoad, err)
	}
	batches := make([]int, o.Runs)
	for i := range batches {
		batches[i] = o.Batch
	}
	// Every GPU provider opens the range: ncu runs with
	// --profile-from-start off and would see nothing otherwise.
	ranged := provider != engine.ProviderCPU
	if ranged {
		if err := cudart.ProfilerStart(""); err != nil {
			return fmt.Errorf("solo run of %s: %w", o.Path, err)
		}
	}
	if _, err := m.Warmup(ctx, batches); err != nil {
		return fmt.Errorf("solo run of %s: %w: %w", o.Path, ErrModelLoad, err)
	}
	if ranged {
		if err := cudart.ProfilerStop(""); err != nil {
			return fmt.Errorf("solo run of %s: %w", o.Path, err)
		}
	}
	return nil
}
