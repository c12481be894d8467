package executor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
)

// paddedModel runs every batch at the next power of two.
type paddedModel struct{ fakeModel }

func (paddedModel) PaddedBatch(n int) int {
	p := 1
	for p < n {
		p *= 2
	}
	return p
}

// A model whose engine pads its batches is scheduled at its padded sizes'
// latencies; the plan's batch cap still bounds its batches.
func TestModelEntryPaddedLatency(t *testing.T) {
	req := &pb.LoadModelRequest{
		Name: "m", SloUs: 100_000, MaxBatchSize: 8,
		Latency: []*pb.LatencyPoint{{Batch: 1, Ms: 1}, {Batch: 8, Ms: 8}},
	}
	plain, err := newModelEntry(req, &fakeModel{})
	require.NoError(t, err)
	padded, err := newModelEntry(req, &paddedModel{})
	require.NoError(t, err)
	for b, runsAs := range map[int]int{1: 1, 2: 2, 3: 4, 5: 8, 8: 8} {
		require.Equal(t, plain.lat.At(runsAs), padded.lat.At(b), "batch %d runs as %d", b, runsAs)
	}
	require.Less(t, plain.lat.At(3), padded.lat.At(3), "interpolated between 2 and 4 without padding")

	req.BatchCap = 3
	capped, err := newModelEntry(req, &paddedModel{})
	require.NoError(t, err)
	require.Equal(t, 3, capped.lat.MaxBatch())
	require.Equal(t, plain.lat.At(4), capped.lat.At(3))
}

// overheadModel measured its dispatch overhead at batches 1 and 8.
type overheadModel struct{ fakeModel }

func (overheadModel) DispatchOverhead() sched.Overhead {
	return sched.Overhead{{Batch: 1, MS: 0.1}, {Batch: 8, MS: 0.8}}
}

// A batch is scheduled with the dispatch overhead measured at its size, not
// the largest overhead measured at any size.
func TestModelEntryOverheadByBatch(t *testing.T) {
	req := &pb.LoadModelRequest{
		Name: "m", SloUs: 100_000, MaxBatchSize: 8,
		Latency: []*pb.LatencyPoint{{Batch: 1, Ms: 1}, {Batch: 8, Ms: 8}},
	}
	m, err := newModelEntry(req, &overheadModel{})
	require.NoError(t, err)
	for b, want := range map[int]time.Duration{1: 1100 * time.Microsecond, 4: 4400 * time.Microsecond, 8: 8800 * time.Microsecond} {
		require.Equal(t, want, m.lat.At(b), "ℓ(%d)", b)
	}
}
