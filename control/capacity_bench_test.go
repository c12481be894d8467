package control

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/planbench"
)

// benchCapacity times one capacity search (what the daemon runs after each
// plan, within 2 s) for k synthetic models on g emulated V100s, the
// planner-time benchmarks' inputs (gpulet/planbench).
func benchCapacity(b *testing.B, algo gpulet.Algo, k, g int) {
	n, err := planbench.LoadNode("igniter-v100", 4)
	require.NoError(b, err)
	in, err := n.Synthetic(k, g)
	require.NoError(b, err)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, atLeast, err := Capacity(ctx, algo, in, n.Options()); err != nil || atLeast {
			b.Fatal(err, atLeast)
		}
	}
}

func BenchmarkCapacityGpuletInt5x4(b *testing.B)  { benchCapacity(b, gpulet.AlgoGpuletInt, 5, 4) }
func BenchmarkCapacityGpuletInt16x8(b *testing.B) { benchCapacity(b, gpulet.AlgoGpuletInt, 16, 8) }
func BenchmarkCapacityGpuletInt64x8(b *testing.B) { benchCapacity(b, gpulet.AlgoGpuletInt, 64, 8) }

// benchIdlePlan times the plan of an idle node (Plan's spread: a bisection
// of the share, a plan per step), what a fresh daemon runs at its start,
// for the same inputs with no traffic.
func benchIdlePlan(b *testing.B, k, g int) {
	n, err := planbench.LoadNode("igniter-v100", 4)
	require.NoError(b, err)
	in, err := n.Synthetic(k, g)
	require.NoError(b, err)
	idle := withRates(in, func(int, float64) float64 { return 0 })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, err := Plan(ctx, gpulet.AlgoGpuletInt, idle, n.Options(), Room{Base: Headroom})
		if err != nil || !p.Spread {
			b.Fatal(err, p.Spread)
		}
	}
}

func BenchmarkIdlePlanGpuletInt5x4(b *testing.B)  { benchIdlePlan(b, 5, 4) }
func BenchmarkIdlePlanGpuletInt16x8(b *testing.B) { benchIdlePlan(b, 16, 8) }
func BenchmarkIdlePlanGpuletInt64x8(b *testing.B) { benchIdlePlan(b, 64, 8) }
