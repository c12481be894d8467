package engine

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo"
)

// oneRowRequests returns n one-row requests of random input for a zoo model.
func oneRowRequests(b *testing.B, zm modelzoo.Model, n int) [][]tensor.Tensor {
	rng := rand.New(rand.NewPCG(11, uint64(n)))
	reqs := make([][]tensor.Tensor, n)
	for i := range reqs {
		reqs[i] = []tensor.Tensor{randomInput(b, zm.InputName, append([]int64{1}, zm.InputShape[1:]...), rng)}
	}
	return reqs
}

// BenchmarkBatchingSpeedup compares, on the CPU engine with 2 intra-op
// threads, one Run of a batch of 8 one-row requests with 8 Runs of one
// request each. speedup = time of the 8 single runs / time of the batch.
func BenchmarkBatchingSpeedup(b *testing.B) {
	for _, name := range []string{"lenet5", "resnet18"} {
		b.Run(name, func(b *testing.B) {
			zm, err := modelzoo.Lookup(name)
			require.NoError(b, err)
			m, err := newCPU(b, 2).Load(context.Background(), ModelSpec{Name: name, Path: zooModel(b, name), MaxBatchSize: 8})
			require.NoError(b, err)
			defer func() { require.NoError(b, m.Close()) }()
			reqs := oneRowRequests(b, zm, 8)
			ctx := context.Background()
			_, err = m.Warmup(ctx, []int{1, 8})
			require.NoError(b, err)

			var batched, singles time.Duration
			for b.Loop() {
				start := time.Now()
				if _, _, err := m.Run(ctx, reqs, nil); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				for _, r := range reqs {
					if _, _, err := m.Run(ctx, [][]tensor.Tensor{r}, nil); err != nil {
						b.Fatal(err)
					}
				}
				batched += mid.Sub(start)
				singles += time.Since(mid)
			}
			b.ReportMetric(float64(singles)/float64(batched), "speedup")
			b.ReportMetric(float64(batched.Microseconds())/float64(b.N), "batch8-µs")
			b.ReportMetric(float64(singles.Microseconds())/float64(b.N), "8singles-µs")
		})
	}
}

// BenchmarkDispatchOverhead measures the onnxruntime engine's own cost per
// batch (RunInfo.Overhead: validation, joining 8 one-row requests, runtime
// values and run options, splitting) beside the model's compute, with the
// intra-op threads spinning when idle (ONNX Runtime's default) or not.
func BenchmarkDispatchOverhead(b *testing.B) {
	for _, name := range []string{"mlp", "lenet5"} {
		for _, spin := range []bool{true, false} {
			label := name + "/spin"
			if !spin {
				label = name + "/nospin"
			}
			b.Run(label, func(b *testing.B) {
				zm, err := modelzoo.Lookup(name)
				require.NoError(b, err)
				initORT(b)
				e, err := NewORT(ORTOptions{IntraOpThreads: 2, DisableSpinning: !spin})
				require.NoError(b, err)
				defer func() { require.NoError(b, e.Close()) }()
				m, err := e.Load(context.Background(), ModelSpec{Name: name, Path: zooModel(b, name), MaxBatchSize: 8})
				require.NoError(b, err)
				reqs := oneRowRequests(b, zm, 8)
				ctx := context.Background()
				var overhead, compute time.Duration
				for b.Loop() {
					_, info, err := m.Run(ctx, reqs, nil)
					if err != nil {
						b.Fatal(err)
					}
					overhead += info.Overhead
					compute += info.Compute
				}
				b.ReportMetric(float64(overhead.Nanoseconds())/float64(b.N), "overhead-ns/batch")
				b.ReportMetric(float64(compute.Nanoseconds())/float64(b.N), "compute-ns/batch")
			})
		}
	}
}

// BenchmarkEmulatedRun measures the emulated engine's cost per batch of 8
// one-row lenet5 requests with a sleeper that returns at once.
func BenchmarkEmulatedRun(b *testing.B) {
	e := NewEmulated(EmulatedOptions{Sleeper: instantSleeper{}})
	defer func() { require.NoError(b, e.Close()) }()
	m, err := e.Load(context.Background(), ModelSpec{
		Name: "lenet5", MaxBatchSize: 8,
		Inputs:  []TensorSpec{{Name: "input", DataType: tensor.FP32, Shape: []int64{1, 28, 28}}},
		Outputs: []TensorSpec{{Name: "output", DataType: tensor.FP32, Shape: []int64{10}}},
		Timing:  Timing{Latency: linear},
	})
	require.NoError(b, err)
	zm, err := modelzoo.Lookup("lenet5")
	require.NoError(b, err)
	reqs := oneRowRequests(b, zm, 8)
	ctx := context.Background()
	for b.Loop() {
		if _, _, err := m.Run(ctx, reqs, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// instantSleeper returns at once.
type instantSleeper struct{}

func (instantSleeper) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }
