package profiler

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// recordMemory asks the executor of one size, after every batch was sampled
// on it, for the most host memory it held (its resident high-water mark:
// the engine, the model's weights and its working memory at the largest
// profiled batch), notes it on the size's ExecutorInfo and stores the
// largest over the run's sizes as the model's memory on the device type,
// with what the executor held before it loaded the model (l.ownMB: its
// runtime, which the planner counts once per executor, not per model).
// An executor that cannot say leaves a note, not an error: the latencies
// are what the run is for, and the daemon estimates the memory without it.
func (r *runner) recordMemory(ctx context.Context, l *loaded) error {
	h, err := l.x.Health(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.res.Notes = append(r.res.Notes, fmt.Sprintf("memory at %d%% not measured: ask the executor's health: %s", l.size, grpcMessage(err)))
		}
		return nil
	}
	if h.PeakResidentBytes <= 0 {
		r.res.Notes = append(r.res.Notes, fmt.Sprintf("memory at %d%% not measured: the executor does not report its peak resident memory", l.size))
		return nil
	}
	mb := float64(h.PeakResidentBytes) / (1 << 20)
	for i := range r.res.Executors {
		if r.res.Executors[i].Size == l.size {
			r.res.Executors[i].PeakResidentMB = mb
		}
	}
	own := l.ownMB
	if own >= mb { // an executor that did not say, or a peak it set before the load
		own = 0
	}
	m := store.ModelMemory{ModelSHA: r.job.Model.SHA256, DeviceType: r.devType, ResidentMB: mb, ExecutorMB: own, RunID: r.runID}
	if err := r.st().PutModelMemory(context.WithoutCancel(ctx), m); err != nil {
		return fmt.Errorf("profile %s on %s: %w", r.job.Model.Name, r.job.Device.ID, err)
	}
	r.log.Info("model memory measured", zap.Int("size", l.size), zap.Float64("resident_mb", mb), zap.Float64("executor_mb", own))
	// The store keeps the peak that holds the most of the model (its peak
	// less the executor's own): the result says what it keeps.
	return r.storedMemory(context.WithoutCancel(ctx))
}

// storedMemory fills the result's memory from the store when a stored
// profile is reused; a model profiled before memory was measured has none.
func (r *runner) storedMemory(ctx context.Context) error {
	m, err := r.st().ModelMemory(ctx, r.job.Model.SHA256, r.devType)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("profile %s on %s: %w", r.job.Model.Name, r.job.Device.ID, err)
	}
	r.res.ResidentMB, r.res.ExecutorMB = m.ResidentMB, m.ExecutorMB
	return nil
}

// MeasureMemory measures the host memory of job's model on job's device and
// nothing else, for a model whose latencies were profiled before gpuletd
// measured memory: one executor at the largest of job.Sizes, the model
// loaded with a warm-up at every batch of job.Batches (give the batches its
// stored profile has, the largest the planner may use) and memoryRuns more
// batches of each size run, its peak resident memory stored as the model's memory on the device type (the larger of
// it and what is stored stands) and returned, in MB. Errors as Measure's
// (ErrBadJob, ErrModelLoad, ErrDeviceLost…); 0 and no error when the
// executor does not report its peak. Emulated devices have no memory to
// measure: ErrBadJob.
func MeasureMemory(ctx context.Context, job Job) (float64, error) {
	if err := job.plan(); err != nil {
		return 0, err
	}
	if job.Device.Kind == mps.KindEmulated {
		return 0, fmt.Errorf("measure the memory of %s on %s: %w: an emulated device's memory is its reference set's", job.Model.Name, job.Device.ID, ErrBadJob)
	}
	r := newRunner(job)
	size := slices.Max(job.Sizes)
	l, err := r.launchLoaded(ctx, size, "memory", nil)
	if err != nil {
		return 0, err
	}
	defer r.closeExecutor(l.x, size)
	for _, b := range job.Batches {
		inputs, err := requestInputs(l.inputs, job.Model.Shapes, b, job.Model.MaxBatchSize > 0, uint64(size)<<16|uint64(b))
		if err != nil {
			return 0, fmt.Errorf("measure the memory of %s on %s: %w: %v", job.Model.Name, job.Device.ID, ErrModelLoad, err)
		}
		for range memoryRuns {
			if _, err := r.infer(ctx, l, b, inputs); err != nil {
				return 0, err
			}
		}
	}
	if err := r.recordMemory(ctx, l); err != nil {
		return 0, err
	}
	return r.res.ResidentMB, nil
}

// memoryRuns is how many batches of each size MeasureMemory runs after the
// warm-up: the engine's memory keeps growing over the first runs of a
// shape (the demo's vgg on two cores peaked at 990 MB after the warm-up
// alone, 1040 MB with these runs, 1115 MB after a profile run's hundreds
// of samples; resnet18 at 585 MB with them against 571 MB).
const memoryRuns = 5
