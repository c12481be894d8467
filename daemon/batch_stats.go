package daemon

import (
	"cmp"
	"slices"
	"sync"

	"github.com/gpulet/gpuletd/kserve"
)

// Triton's batch_stats: for each batch size a model ran, the batches of
// that size and the time of their inputs, runs and outputs. The daemon
// sees answers, not batches: each answer adds its share of its batch (its
// rows of the batch's) to the count and that share of the batch's times,
// so that a batch whose answers were all handed out counts once, whole.

// batchSizeStats are one batch size's statistics, in shares.
type batchSizeStats struct {
	count, inputNS, inferNS, outputNS shareCount
}

// batchStats are a model's batch_stats by batch size.
type batchStats struct{ sizes sync.Map } // int32 → *batchSizeStats

// add books an answer's share of a batch of size rows whose parts took r.
func (b *batchStats) add(size int32, share float64, r execReport) {
	v, ok := b.sizes.Load(size)
	if !ok {
		v, _ = b.sizes.LoadOrStore(size, &batchSizeStats{})
	}
	s := v.(*batchSizeStats)
	s.count.add(share)
	s.inputNS.add(share * float64(r.input))
	s.inferNS.add(share * float64(r.compute))
	s.outputNS.add(share * float64(r.output))
}

// list returns the batch sizes run, ascending, leaving out those no whole
// batch of has been counted yet; empty, not nil, before any.
func (b *batchStats) list() []kserve.BatchStatistics {
	out := []kserve.BatchStatistics{}
	b.sizes.Range(func(k, v any) bool {
		s := v.(*batchSizeStats)
		if n := s.count.whole(); n > 0 {
			d := func(ns *shareCount) kserve.StatDuration { return kserve.StatDuration{Count: n, NS: ns.whole()} }
			out = append(out, kserve.BatchStatistics{BatchSize: int64(k.(int32)), ComputeInput: d(&s.inputNS), ComputeInfer: d(&s.inferNS), ComputeOutput: d(&s.outputNS)})
		}
		return true
	})
	slices.SortFunc(out, func(a, b kserve.BatchStatistics) int { return cmp.Compare(a.BatchSize, b.BatchSize) })
	return out
}
