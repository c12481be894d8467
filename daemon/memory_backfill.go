package daemon

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// Models profiled on the CPU before gpuletd measured memory.
//
// The planner counts a model's memory on the CPU as its profile run
// measured it (host_memory.go); a model whose profile was stored before
// runs measured memory has only the estimate from its file's size, which
// for the demo's vgg is 312 MB against the 1.1 GB it holds. At start,
// before the first plan and while no executor holds the devices, such a
// model is loaded once more on an executor of its own, warmed up at the
// batches its profile has, and its peak resident memory stored: a few
// seconds per model, once.

// memoryJob is a model whose memory on a CPU device type is to be measured,
// with the batches of its stored profile.
type memoryJob struct {
	m       *repository.Model
	d       mps.Device
	batches []int
}

// missingMemory lists the models served on the node's CPU devices that have
// a profile of their own there but no memory measured, and no memory_mb in
// their configuration.
func (n *node) missingMemory(ctx context.Context) []memoryJob {
	var jobs []memoryJob
	for _, d := range n.measuredDevices() {
		if d.Kind != mps.KindCPU {
			continue
		}
		for _, m := range n.catalog.all() {
			if m.Config.MemoryMB > 0 {
				continue
			}
			if _, err := n.st.ModelMemory(ctx, m.SHA256, d.Type); !errors.Is(err, store.ErrNotFound) {
				continue // measured, or a store error the plan reports
			}
			pts, err := n.st.Latency(ctx, m.SHA256, d.Type)
			if err != nil {
				continue // no profile of its own: profiled (and measured) first
			}
			var batches []int
			for _, p := range pts {
				if p.Complete && p.Batch <= max(m.Config.MaxBatchSize, 1) && !slices.Contains(batches, p.Batch) {
					batches = append(batches, p.Batch)
				}
			}
			if len(batches) > 0 {
				jobs = append(jobs, memoryJob{m: m, d: d, batches: batches})
			}
		}
	}
	return jobs
}

// measureMissingMemory measures the memory of the models missingMemory
// lists, saying what it found in an event per model; one it cannot measure
// keeps the estimate, and a warning says why (the kernel's out-of-memory
// killer included: that model is larger than the memory gpuletd may use).
func (n *node) measureMissingMemory(ctx context.Context, binary string) {
	for _, j := range n.missingMemory(ctx) {
		if ctx.Err() != nil {
			return
		}
		at := n.sup.oomNow()
		mb, err := profiler.MeasureMemory(ctx, profiler.Job{
			Model:  ProfilerModel(j.m),
			Device: j.d, Batches: j.batches, Store: n.st, Launcher: n.profileLauncher(binary, false), Log: n.log.Named("profiler"),
		})
		attrs := map[string]string{"model": j.m.Name, "device": j.d.ID}
		estimate := estimateMemoryMB(j.m.Bytes, sessionsOn(j.d, j.m.Config.MaxBatchSize))
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			err = profileKilledForMemory(err, at, n.sup.oomNow(), slices.Max(j.batches))
			n.events.add(EventProfileJob, store.SeverityWarning, fmt.Sprintf("could not measure the memory of %s on %s (profiled before gpuletd measured memory): %v; the planner counts %.0f MB, estimated from its file's size",
				j.m.Name, j.d.ID, err, estimate), attrs)
		case mb > 0:
			n.events.add(EventProfileJob, store.SeverityInfo, fmt.Sprintf("measured the memory of %s on %s: %.0f MB at batches up to %d (it was profiled before gpuletd measured memory; the estimate from its file's size was %.0f MB)",
				j.m.Name, j.d.ID, mb, slices.Max(j.batches), estimate), attrs)
		default:
			n.log.Info("model memory not reported by its executor", zap.String("model", j.m.Name), zap.String("device", j.d.ID))
		}
	}
}
