package control

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

// Capacity is the factor of the load at which the planner stops placing
// all of it: one whole GPU serves 1000 req/s of ℓ(b) = b ms models with a
// 20 ms SLO, so 250 req/s in all fits 4 times over, in any mix of them.
func TestCapacity(t *testing.T) {
	prof := wholeGPUProfiles(t)
	gpus := []gpulet.GPU{{ID: "g0", Type: "t", MemoryMB: 1000, Backend: gpulet.BackendNone}}
	for _, tc := range []struct {
		name  string
		rates map[string]float64
		want  float64
	}{
		{"one model", map[string]float64{"a": 250}, 4},
		{"two models, a quarter of what fits", map[string]float64{"a": 200, "b": 50}, 4},
		{"overloaded", map[string]float64{"a": 2000}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := gpulet.Input{GPUs: gpus}
			for _, name := range []string{"a", "b"} {
				if r, ok := tc.rates[name]; ok {
					in.Demands = append(in.Demands, gpulet.Demand{Name: name, Profile: prof(name), SLOMS: 20, Rate: r})
				}
			}
			s, atLeast, err := Capacity(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{})
			require.NoError(t, err)
			require.False(t, atLeast)
			require.InDelta(t, tc.want, s, 0.03*tc.want)
			require.Empty(t, scaledPlan(t, in, s).Unscheduled, "the load times the capacity is placed")
			require.NotEmpty(t, scaledPlan(t, in, s*1.02).Unscheduled, "2%% more is not")
		})
	}

	// An idle model keeps its minimum place, unscaled: a slow one (ℓ(b) =
	// 150·b ms, at most about 6.7 req/s within 400 ms) with no traffic does
	// not bound the growth of the busy one on the other GPU (10 times its
	// 100 req/s), as it would if it grew too.
	var pts []gpulet.Point
	for b := 1; b <= 32; b++ {
		pts = append(pts, gpulet.Point{Batch: b, Size: 100, P50MS: 150 * float64(b)})
	}
	slow, err := gpulet.NewProfile("slow", "t", 100, pts)
	require.NoError(t, err)
	capacityWith := func(b float64) float64 {
		in := gpulet.Input{GPUs: append(gpus, gpulet.GPU{ID: "g1", Type: "t", MemoryMB: 1000, Backend: gpulet.BackendNone}), Demands: []gpulet.Demand{
			{Name: "a", Profile: prof("a"), SLOMS: 20, Rate: 100}, {Name: "slow", Profile: slow, SLOMS: 400, Rate: b}}}
		s, _, err := Capacity(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{})
		require.NoError(t, err)
		require.Empty(t, scaledPlan(t, in, s).Unscheduled)
		require.NotEmpty(t, scaledPlan(t, in, s*1.02).Unscheduled)
		if b < MinPlanRate {
			require.Equal(t, MinPlanRate, scaledLoad(in, s).Demands[1].Rate, "unscaled")
		}
		return s
	}
	idle, busy := capacityWith(0), capacityWith(MinPlanRate)
	require.InDelta(t, 10, idle, 0.2, "the idle model stays at its minimum")
	require.Less(t, busy, 7.0, "a busy one grows with the rest")

	in := gpulet.Input{GPUs: gpus, Demands: []gpulet.Demand{{Name: "a", Profile: prof("a"), SLOMS: 20}}}
	s, atLeast, err := Capacity(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{})
	require.NoError(t, err)
	require.Equal(t, MinPlanRate, PlannedLoad(in), "a model with no traffic is planned at the minimum")
	require.InDelta(t, 1000, CapacityRate(in, 1000/MinPlanRate), 1e-9)
	require.InDelta(t, 1000/MinPlanRate, s, 0.01*1000/MinPlanRate, "so its capacity is in its multiples")
	require.False(t, atLeast)

	// A model so fast that the load still fits at the largest factor the
	// search tries: the figure is a lower bound, and says so.
	var fast []gpulet.Point
	for b := 1; b <= 32; b++ {
		fast = append(fast, gpulet.Point{Batch: b, Size: 100, P50MS: 0.001})
	}
	quick, err := gpulet.NewProfile("quick", "t", 100, fast)
	require.NoError(t, err)
	s, atLeast, err = Capacity(context.Background(), gpulet.AlgoSBP, gpulet.Input{GPUs: gpus,
		Demands: []gpulet.Demand{{Name: "quick", Profile: quick, SLOMS: 20}}}, gpulet.Options{})
	require.NoError(t, err)
	require.Equal(t, float64(gpulet.MaxScale), s)
	require.True(t, atLeast, "it fits further than the search looks")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, atLeast, err = Capacity(ctx, gpulet.AlgoSBP, in, gpulet.Options{})
	require.NoError(t, err)
	require.True(t, atLeast, "a search cut short says its figure is a lower bound")
	require.Zero(t, s)

	s, _, err = Capacity(context.Background(), gpulet.AlgoSBP, gpulet.Input{GPUs: gpus}, gpulet.Options{})
	require.NoError(t, err)
	require.Zero(t, s, "no demands: nothing to scale")
}

// scaledPlan is the planner's plan of Capacity's load in in scaled by s.
func scaledPlan(t *testing.T, in gpulet.Input, s float64) *gpulet.Plan {
	t.Helper()
	p, err := gpulet.Run(context.Background(), gpulet.AlgoSBP, scaledLoad(in, s), gpulet.Options{})
	require.NoError(t, err)
	return p
}

// A model that fits at no rate gives the load a capacity of 0; Placeable
// leaves it out, and the others' capacity is what it is without it.
func TestPlaceableLeavesOutWhatFitsAtNoRate(t *testing.T) {
	prof := wholeGPUProfiles(t)
	huge := *prof("b")
	huge.MemoryMB = 1e9
	in := gpulet.Input{GPUs: []gpulet.GPU{{ID: "g0", Type: "t", MemoryMB: 1000, Backend: gpulet.BackendNone}},
		Demands: []gpulet.Demand{{Name: "a", Profile: prof("a"), SLOMS: 20, Rate: 250}, {Name: "b", Profile: &huge, SLOMS: 20, Rate: 10}}}
	s, _, err := Capacity(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{})
	require.NoError(t, err)
	require.Zero(t, s, "b never fits")

	p, err := gpulet.Run(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{})
	require.NoError(t, err)
	rest := Placeable(in, p)
	require.Len(t, rest.Demands, 1)
	require.Equal(t, "a", rest.Demands[0].Name)
	s, _, err = Capacity(context.Background(), gpulet.AlgoSBP, rest, gpulet.Options{})
	require.NoError(t, err)
	require.InDelta(t, 4, s, 0.12, "a's alone")
	require.Len(t, in.Demands, 2, "in is left as it was")
}
