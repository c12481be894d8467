package planbench

import (
	"context"
	"testing"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/stretchr/testify/require"
)

func benchPlan(b *testing.B, algo gpulet.Algo, k, g int) {
	n := igniterNode(b, 4)
	in, err := n.Synthetic(k, g)
	require.NoError(b, err)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := gpulet.Run(ctx, algo, in, n.Options()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGpuletInt5x4 and BenchmarkGpuletInt64x8 are the planner-time
// goals (< 1 ms and < 100 ms).
func BenchmarkGpuletInt5x4(b *testing.B)  { benchPlan(b, gpulet.AlgoGpuletInt, 5, 4) }
func BenchmarkGpuletInt64x8(b *testing.B) { benchPlan(b, gpulet.AlgoGpuletInt, 64, 8) }
func BenchmarkGpulet64x8(b *testing.B)    { benchPlan(b, gpulet.AlgoGpulet, 64, 8) }
func BenchmarkSBP64x8(b *testing.B)       { benchPlan(b, gpulet.AlgoSBP, 64, 8) }
func BenchmarkIdeal5x4(b *testing.B)      { benchPlan(b, gpulet.AlgoIdeal, 5, 4) }
