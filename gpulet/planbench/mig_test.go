package planbench

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/migrules"
)

// TestMIGNode: a node of a MIG reference set is made of MIG GPUs with the
// set's table and up to seven instances each, and its plans are MIG
// layouts.
func TestMIGNode(t *testing.T) {
	n, err := LoadNode("parvagpu-a100", 2)
	require.NoError(t, err)
	for _, g := range n.GPUs {
		require.Equal(t, gpulet.BackendMIG, g.Backend)
		require.Equal(t, migrules.A100_80GB, g.MIGModel)
		require.Equal(t, MIGMaxInstances, g.MaxGPULets)
	}
	xs, err := n.Mixes()
	require.NoError(t, err)
	p, err := gpulet.Run(context.Background(), gpulet.AlgoGpuletInt, xs[0].Input(n.GPUs, 1), n.Options())
	require.NoError(t, err)
	require.True(t, p.Schedulable)
	for _, g := range p.GPUs {
		for _, l := range g.GPULets {
			require.NotEmpty(t, l.MIGProfile)
		}
	}
}

// TestMaxScaleWithin: a planner that cannot place the mix at any scale
// gives 0 at once; a plan past the limit counts as not schedulable and
// marks the figure as a lower bound; a cancelled search stops.
func TestMaxScaleWithin(t *testing.T) {
	n, err := LoadNode("parvagpu-a100", 4)
	require.NoError(t, err)
	xs, err := n.Mixes()
	require.NoError(t, err)
	equal := xs[0]
	require.Len(t, equal.Demands, 11)

	// Whole A100s shared in time cannot hold 11 models whose SLOs run
	// from 13 to 103 ms on 4 GPUs, whatever the rate.
	s, bound, err := MaxScaleWithin(context.Background(), equal, n.GPUs, gpulet.AlgoSBP, n.Options(), time.Minute)
	require.NoError(t, err)
	require.Zero(t, s)
	require.False(t, bound)

	// Ideal's search stops at its first plan when the scale fits; near
	// capacity it must look at every layout and runs past the limit.
	_, bound, err = MaxScaleWithin(context.Background(), equal, n.GPUs, gpulet.AlgoIdeal, n.Options(), time.Nanosecond)
	require.NoError(t, err)
	require.True(t, bound, "an ideal plan ran past a nanosecond")

	s, bound, err = MaxScaleWithin(context.Background(), equal, n.GPUs, gpulet.AlgoGpuletInt, n.Options(), time.Minute)
	require.NoError(t, err)
	require.Greater(t, s, 1.0)
	require.False(t, bound)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = MaxScaleWithin(ctx, equal, n.GPUs, gpulet.AlgoGpuletInt, n.Options(), time.Minute)
	require.ErrorIs(t, err, context.Canceled, "a cancelled search stops")
}

// TestScenarioModelsOfALargeSet: a set with more models than the paper's
// five varies five of them, spread over the latency ranking, so its
// scenarios stay 1,023.
func TestScenarioModelsOfALargeSet(t *testing.T) {
	n, err := LoadNode("parvagpu-a100", 4)
	require.NoError(t, err)
	idx := n.ScenarioModels()
	require.Len(t, idx, MaxScenarioModels)
	ranked := n.ranked()
	names := map[string]bool{}
	for _, i := range idx {
		names[n.Models[i].Name] = true
	}
	require.True(t, names[ranked[0].Name], "the shortest model")
	require.True(t, names[ranked[len(ranked)-1].Name], "the longest model")
	sc := n.Scenarios(100)
	require.Len(t, sc, 1023)
	for _, rates := range sc {
		for i, r := range rates {
			if !slices.Contains(idx, i) {
				require.Zero(t, r)
			}
		}
	}
	small, err := LoadNode("igniter-v100", 4)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2, 3}, small.ScenarioModels())
}
