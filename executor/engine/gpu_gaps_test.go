//go:build gpu

package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// BenchmarkGPURunGaps times one small model's runs on the CUDA provider as
// serving issues them rather than as a profile does: with idle gaps between
// runs (slept, as an executor waiting for requests does, or spun) and with
// the batch size changing from run to run, under each convolution
// algorithm search, and with one session per batch size (each session
// then sees one shape). A profile measures back-to-back runs of one size;
// the daemon on a GPU saw lenet5's batches take several times their
// profiled time while serving (docs/BENCHMARKS.md, "On an NVIDIA H200").
// It reports the p50 and p90 of a run's wall time.
//
//	go test -tags gpu -run '^$' -bench GPURunGaps ./executor/engine
func BenchmarkGPURunGaps(b *testing.B) {
	requireGPU(b)
	initORT(b)
	mixed := []int{1, 3, 2, 5, 4}
	for _, name := range []string{"lenet5", "resnet18"} {
		for _, search := range []string{ConvSearchHeuristic, ConvSearchDefault, ConvSearchExhaustive} {
			e, err := NewORT(ORTOptions{Provider: ProviderCUDA, IntraOpThreads: 1, DisableSpinning: true, MemoryLimit: 4 << 30, ConvAlgoSearch: search})
			require.NoError(b, err)
			path := zooModel(b, name)
			// perSize[n] is a session that only ever runs batches of n.
			perSize := make([]Loaded, 6)
			for n := range perSize {
				perSize[n], err = e.Load(context.Background(), ModelSpec{Name: name, Path: path, MaxBatchSize: 8})
				require.NoError(b, err)
				_, err = perSize[n].Warmup(context.Background(), []int{max(n, 1)})
				require.NoError(b, err)
			}
			m := perSize[0]
			_, err = m.Warmup(context.Background(), []int{1, 2, 3, 4, 5, 6, 7, 8})
			require.NoError(b, err)
			reqs := gapRequests(b, m, 8)
			for _, tc := range []struct {
				name    string
				sizes   []int
				gap     time.Duration
				spin    bool
				perSize bool
			}{
				{"b2/back-to-back", []int{2}, 0, false, false},
				{"b2/sleep-2ms", []int{2}, 2 * time.Millisecond, false, false},
				{"b2/spin-2ms", []int{2}, 2 * time.Millisecond, true, false},
				{"b2/sleep-20ms", []int{2}, 20 * time.Millisecond, false, false},
				{"b1-5/back-to-back", mixed, 0, false, false},
				{"b1-5/sleep-2ms", mixed, 2 * time.Millisecond, false, false},
				{"b1-5/session-per-size", mixed, 0, false, true},
			} {
				b.Run(fmt.Sprintf("%s/%s/%s", name, search, tc.name), func(b *testing.B) {
					var took []time.Duration
					for i := 0; b.Loop(); i++ {
						n := tc.sizes[i%len(tc.sizes)]
						run := m
						if tc.perSize {
							run = perSize[n]
						}
						start := time.Now()
						_, _, err := run.Run(context.Background(), reqs[:n], nil)
						took = append(took, time.Since(start))
						require.NoError(b, err)
						switch {
						case tc.gap == 0:
						case tc.spin:
							for end := time.Now().Add(tc.gap); time.Now().Before(end); {
							}
						default:
							time.Sleep(tc.gap)
						}
					}
					slices.Sort(took)
					b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
					b.ReportMetric(float64(took[len(took)*9/10].Microseconds()), "p90-µs")
				})
			}
			for _, l := range perSize {
				require.NoError(b, l.Close())
			}
			require.NoError(b, e.Close())
		}
	}
}

// gapRequests makes n one-row requests for the model's first input.
func gapRequests(tb testing.TB, m Loaded, n int) [][]tensor.Tensor {
	tb.Helper()
	in := m.Inputs()[0]
	elems, err := tensor.NumElements(in.Shape)
	require.NoError(tb, err)
	reqs := make([][]tensor.Tensor, n)
	for r := range reqs {
		x, err := tensor.FromFloat32s(in.Name, append([]int64{1}, in.Shape...), make([]float32, elems))
		require.NoError(tb, err)
		reqs[r] = []tensor.Tensor{x}
	}
	return reqs
}
