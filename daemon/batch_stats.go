package daemon

import (
	"cmp"
	"slices"
	"sync"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
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

// batchStat is one batch size's statistics, whole.
type batchStat struct {
	size                           int32
	count, inputNS, inferNS, outNS int64
}

// list returns the batch sizes run, ascending, leaving out those no whole
// batch of has been counted yet.
func (b *batchStats) list() []batchStat {
	var out []batchStat
	b.sizes.Range(func(k, v any) bool {
		s := v.(*batchSizeStats)
		if n := s.count.whole(); n > 0 {
			out = append(out, batchStat{size: k.(int32), count: n, inputNS: s.inputNS.whole(), inferNS: s.inferNS.whole(), outNS: s.outputNS.whole()})
		}
		return true
	})
	slices.SortFunc(out, func(a, b batchStat) int { return cmp.Compare(a.size, b.size) })
	return out
}

// json is the list as the statistics extension's JSON writes it.
func (b *batchStats) json() []map[string]any {
	out := []map[string]any{}
	for _, s := range b.list() {
		d := func(ns int64) map[string]int64 { return map[string]int64{"count": s.count, "ns": ns} }
		out = append(out, map[string]any{"batch_size": s.size, "compute_input": d(s.inputNS), "compute_infer": d(s.inferNS), "compute_output": d(s.outNS)})
	}
	return out
}

// proto is the list as gRPC's ModelStatistics carries it.
func (b *batchStats) proto() []*pb.InferBatchStatistics {
	var out []*pb.InferBatchStatistics
	for _, s := range b.list() {
		d := func(ns int64) *pb.StatisticDuration {
			return &pb.StatisticDuration{Count: uint64(s.count), Ns: uint64(ns)}
		}
		out = append(out, &pb.InferBatchStatistics{BatchSize: uint64(s.size), ComputeInput: d(s.inputNS), ComputeInfer: d(s.inferNS), ComputeOutput: d(s.outNS)})
	}
	return out
}
