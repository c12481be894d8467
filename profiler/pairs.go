package profiler

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
)

// measurePairs measures co-locations of the model with itself: for every
// split of the device into two profiled sizes p and 100−p (pairSplits), two
// executors side by side, and for every batch pair of the grid both run
// batches back to back at the same time while each side's engine time is
// sampled (coRun). The measured pairs replace the model's stored ones on
// this device type; on an error the pairs measured so far are stored.
func (r *runner) measurePairs(ctx context.Context) error {
	splits := pairSplits(r.job.Sizes, r.job.Device.Sizes)
	total := 0
	for _, s := range splits {
		total += len(pairBatchGrid(s, r.job.PairBatches))
	}
	var pairs []Pair
	save := func(err error) error {
		if len(pairs) == 0 {
			return err
		}
		return errors.Join(err, r.storePairs(ctx, pairs))
	}
	for _, split := range splits {
		taken := map[string]bool{}
		la, err := r.launchLoaded(ctx, split[0], "pair-a", taken)
		if err != nil {
			return save(err)
		}
		lb, err := r.launchLoaded(ctx, split[1], "pair-b", taken)
		if err != nil {
			r.closeExecutor(la.x, split[0])
			return save(err)
		}
		for _, bb := range pairBatchGrid(split, r.job.PairBatches) {
			r.progress(Progress{Phase: "pairs", Done: len(pairs), Total: total, Size: split[0], Batch: bb[0], SizeB: split[1], BatchB: bb[1]})
			p, err := r.coRun(ctx, la, lb, bb[0], bb[1])
			if err != nil {
				r.closeExecutor(la.x, split[0])
				r.closeExecutor(lb.x, split[1])
				return save(err)
			}
			pairs = append(pairs, p)
			r.progress(Progress{Phase: "pairs", Done: len(pairs), Total: total, Size: split[0], Batch: bb[0], SizeB: split[1], BatchB: bb[1],
				Samples: min(p.SamplesA, p.SamplesB), Finished: true, P50MS: p.ColocAMS, Stable: p.Stable})
		}
		r.closeExecutor(la.x, split[0])
		r.closeExecutor(lb.x, split[1])
	}
	return r.storePairs(ctx, pairs)
}

// coSide is one side of a co-location run.
type coSide struct {
	l      *loaded
	b      int
	inputs []*pb.Tensor

	mu      sync.Mutex
	samples []float64
	err     error
}

func (s *coSide) add(ms float64) {
	s.mu.Lock()
	s.samples = append(s.samples, ms)
	s.mu.Unlock()
}

func (s *coSide) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

func (s *coSide) state() ([]float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]float64(nil), s.samples...), s.err
}

// coRun runs batches of ba on side a and bb on side b at the same time.
// Both sides warm up, then start sampling together; sampling stops for both
// once the stop rule is met (or capped) on each side, and a batch that ends
// after that moment is discarded, so every sample ran while the other side
// was busy.
func (r *runner) coRun(ctx context.Context, la, lb *loaded, ba, bb int) (Pair, error) {
	batching := r.job.Model.MaxBatchSize > 0
	ina, err := requestInputs(la.inputs, r.job.Model.Shapes, ba, batching, uint64(la.size)<<16|uint64(ba))
	if err != nil {
		return Pair{}, err
	}
	inb, err := requestInputs(lb.inputs, r.job.Model.Shapes, bb, batching, uint64(lb.size)<<16|uint64(bb)|1<<40)
	if err != nil {
		return Pair{}, err
	}
	sides := [2]*coSide{{l: la, b: ba, inputs: ina}, {l: lb, b: bb, inputs: inb}}
	rule := r.job.Rule
	var stop atomic.Bool
	ready := make(chan struct{}, 2)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, s := range sides {
		wg.Go(func() {
			var werr error
			for range rule.Warmup {
				if _, werr = r.infer(ctx, s.l, s.b, s.inputs); werr != nil {
					s.fail(werr)
					break
				}
			}
			ready <- struct{}{}
			if werr != nil {
				return
			}
			select {
			case <-start:
			case <-ctx.Done():
				return
			}
			for !stop.Load() {
				ms, err := r.infer(ctx, s.l, s.b, s.inputs)
				if err != nil {
					s.fail(err)
					return
				}
				if stop.Load() {
					return
				}
				s.add(ms)
			}
		})
	}
	<-ready
	<-ready
	close(start)
	t0 := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	stable := false
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
			continue
		case <-tick.C:
		}
		verdicts := [2]Verdict{}
		for i, s := range sides {
			samples, err := s.state()
			if err != nil {
				done = true
				break
			}
			verdicts[i] = rule.Judge(samples, time.Since(t0))
		}
		if verdicts[0] != Continue && verdicts[1] != Continue {
			done, stable = true, verdicts[0] == Stable && verdicts[1] == Stable
		}
	}
	tick.Stop()
	stop.Store(true)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Pair{}, err
	}
	var sums [2]Summary
	for i, s := range sides {
		samples, err := s.state()
		if err != nil {
			return Pair{}, err
		}
		sums[i] = summarize(samples, rule.Z)
	}
	solo := func(size, b int) Num {
		if p, ok := r.res.Point(size, b); ok && p.Complete {
			return Num(p.P50MS)
		}
		return Num(math.NaN())
	}
	return Pair{
		SizeA: la.size, SizeB: lb.size, BatchA: ba, BatchB: bb,
		SoloAMS: solo(la.size, ba), SoloBMS: solo(lb.size, bb),
		ColocAMS: sums[0].P50MS, ColocBMS: sums[1].P50MS, SamplesA: sums[0].Samples, SamplesB: sums[1].Samples,
		Stable: stable, Source: SourceMeasured,
	}, nil
}
