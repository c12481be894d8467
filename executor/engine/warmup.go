package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// runFunc is Loaded.Run.
type runFunc func(ctx context.Context, inputs [][]tensor.Tensor, outputs []string) ([][]tensor.Tensor, RunInfo, error)

// warmup runs, for each batch size b, a batch of b one-row zero-filled
// requests (one request for a model that does not batch; open dimensions
// at l's warm-up shapes, else 1) twice and
// collects the timings: the second run's compute, the smaller of the two
// dispatch overheads and both runs' set-up. A size's first run also pays
// for what happens once (its first buffers touched, a session opened, its
// algorithms chosen), and one run alone can catch a collection pause: on
// the CPU, resnet18's overhead at a batch of 32 read 0.9–51 ms over six
// single runs, and the scheduler adds it to that size's ℓ.
func warmup(ctx context.Context, l *layout, batches []int, run runFunc) (WarmupResult, error) {
	start := time.Now()
	res := WarmupResult{Batches: make([]BatchTiming, 0, len(batches))}
	one, err := zeroRequest(l.inputs, l.warmShapes, 1, l.batched())
	if err != nil {
		return res, fmt.Errorf("warm up model %s: %w", l.name, err)
	}
	for _, b := range batches {
		n := 1
		if l.batched() {
			if b < 1 || b > l.maxBatch {
				return res, fmt.Errorf("warm up model %s: %w: batch %d is outside 1..max_batch_size %d", l.name, ErrInvalidSpec, b, l.maxBatch)
			}
			n = b
		}
		reqs := make([][]tensor.Tensor, n)
		for i := range reqs {
			reqs[i] = one
		}
		var t BatchTiming
		for i := range 2 {
			_, info, err := run(ctx, reqs, nil)
			if err != nil {
				return res, fmt.Errorf("warm up model %s at batch %d: %w", l.name, b, err)
			}
			if i == 0 || info.Overhead < t.Overhead {
				t.Overhead = info.Overhead
			}
			t.Batch, t.Compute, t.Setup = b, info.Compute, t.Setup+info.Setup
		}
		res.Batches = append(res.Batches, t)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}
