package profiler

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// recordMemory asks the executor of one size, after every batch was sampled
// on it, for the most host memory it held (its resident high-water mark:
// the engine, the model's weights and its working memory at the largest
// profiled batch), notes it on the size's ExecutorInfo and stores the
// largest over the run's sizes as the model's memory on the device type.
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
	if mb <= r.res.ResidentMB {
		return nil
	}
	r.res.ResidentMB = mb
	m := store.ModelMemory{ModelSHA: r.job.Model.SHA256, DeviceType: r.devType, ResidentMB: mb, RunID: r.runID}
	if err := r.st().PutModelMemory(context.WithoutCancel(ctx), m); err != nil {
		return fmt.Errorf("profile %s on %s: %w", r.job.Model.Name, r.job.Device.ID, err)
	}
	r.log.Info("model memory measured", zap.Int("size", l.size), zap.Float64("resident_mb", mb))
	return nil
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
	r.res.ResidentMB = m.ResidentMB
	return nil
}
