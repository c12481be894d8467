package control

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

// An idle node gives every model the same share of the GPUs' time, as much
// as the node holds; a node with traffic is planned for it as before.
func TestPlanSpreadsAnIdleNode(t *testing.T) {
	prof := wholeGPUProfiles(t) // 1000 req/s at most on one GPU
	gpu := func(id string) gpulet.GPU {
		return gpulet.GPU{ID: id, Type: "t", MemoryMB: 1000, Backend: gpulet.BackendNone}
	}
	for _, tc := range []struct {
		name   string
		gpus   []gpulet.GPU
		rates  map[string]float64
		spread bool
		// least is the least each model is assigned (req/s).
		least map[string]float64
	}{
		{"two idle models, two GPUs: one each", []gpulet.GPU{gpu("g0"), gpu("g1")},
			map[string]float64{"a": 0, "b": 0}, true, map[string]float64{"a": 990, "b": 990}},
		{"one idle model takes both GPUs", []gpulet.GPU{gpu("g0"), gpu("g1")},
			map[string]float64{"a": 0.5}, true, map[string]float64{"a": 1980}},
		{"two idle models, one GPU: half each", []gpulet.GPU{gpu("g0")},
			map[string]float64{"a": 0, "b": 0.9}, true, map[string]float64{"a": 490, "b": 490}},
		{"traffic: planned for it", []gpulet.GPU{gpu("g0"), gpu("g1")},
			map[string]float64{"a": 5, "b": 0}, false, map[string]float64{"a": PlanRate(5, Headroom), "b": PlanRate(0, Headroom)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := gpulet.Input{GPUs: tc.gpus}
			for _, name := range []string{"a", "b"} {
				if r, ok := tc.rates[name]; ok {
					in.Demands = append(in.Demands, gpulet.Demand{Name: name, Profile: prof(name), SLOMS: 20, Rate: r})
				}
			}
			require.Equal(t, tc.spread, idle(in))
			p, err := Plan(context.Background(), gpulet.AlgoGpulet, in, gpulet.Options{}, Room{Base: Headroom})
			require.NoError(t, err)
			require.Equal(t, tc.spread, p.Spread)
			require.True(t, p.Schedulable)
			require.Empty(t, p.Unscheduled)
			for name, least := range tc.least {
				require.GreaterOrEqual(t, p.Assigned()[name], least, name)
				if !tc.spread {
					require.InDelta(t, least, p.Assigned()[name], 1e-6, name)
				}
			}
			if tc.spread {
				require.Equal(t, len(tc.gpus), p.UsedGPUs(), "every GPU holds a model")
			}
		})
	}
}

// A model no gpu-let takes is reported as it is when the node is busy, and
// the others are spread beside it.
func TestPlanSpreadsBesideAnUnplaceableModel(t *testing.T) {
	in := withUnplaceableModel(t, 0, 0, 0)
	p, err := Plan(context.Background(), gpulet.AlgoGpuletInt, in, gpulet.Options{}, Room{Base: Headroom})
	require.NoError(t, err)
	require.True(t, p.Spread)
	require.Equal(t, []string{"huge"}, p.Unplaceable)
	require.Contains(t, p.Reasons["huge"], "memory")
	require.Equal(t, []string{"huge"}, slices.Collect(maps.Keys(p.Unscheduled)))
	for _, name := range []string{"small", "long"} {
		require.Greater(t, p.Assigned()[name], 2*PlanRate(0, Headroom), name)
	}
}

// A node that cannot hold every model even at the minimum rates keeps the
// plan of the minimum rates, which says what it left out.
func TestPlanDoesNotSpreadAFullNode(t *testing.T) {
	pts := wholeGPUPoints()
	in := gpulet.Input{GPUs: []gpulet.GPU{{ID: "g0", Type: "t", MemoryMB: 1000, Backend: gpulet.BackendNone}}}
	for _, name := range []string{"a", "b"} {
		prof, err := gpulet.NewProfile(name, "t", 600, pts) // two do not fit in 1000 MB
		require.NoError(t, err)
		in.Demands = append(in.Demands, gpulet.Demand{Name: name, Profile: prof, SLOMS: 20})
	}
	p, err := Plan(context.Background(), gpulet.AlgoGpulet, in, gpulet.Options{}, Room{Base: Headroom})
	require.NoError(t, err)
	require.False(t, p.Spread)
	require.Len(t, p.Unscheduled, 1)
}
