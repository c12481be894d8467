package control

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

func TestPlanHeadroom(t *testing.T) {
	// ℓ(b) = b ms on one whole GPU with a 20 ms SLO: batches of 10 every
	// 10 ms, 1000 req/s at most.
	var pts []gpulet.Point
	for b := 1; b <= 32; b++ {
		pts = append(pts, gpulet.Point{Batch: b, Size: 100, P50MS: float64(b)})
	}
	prof, err := gpulet.NewProfile("m", "t", 100, pts)
	require.NoError(t, err)
	for _, tc := range []struct {
		name                 string
		estimate             float64
		planned, unscheduled float64
	}{
		{"the full headroom fits", 500, 600, 0},
		{"less headroom, everything placed", 900, 990, 0},
		{"overloaded: the full headroom's plan", 1100, 1000, 320},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := gpulet.Input{
				GPUs:    []gpulet.GPU{{ID: "g0", Type: "t", MemoryMB: 1000, Backend: gpulet.BackendNone}},
				Demands: []gpulet.Demand{{Name: "m", Profile: prof, SLOMS: 20, Rate: tc.estimate}},
			}
			p, err := Plan(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{}, Headroom)
			require.NoError(t, err)
			require.InDelta(t, tc.planned, p.Assigned()["m"], 1e-6*tc.planned)
			require.InDelta(t, tc.unscheduled, p.UnscheduledRate(), 1e-6*tc.planned)
		})
	}
}

// TestPlanOverloadSharesFairly: one model's flood on a node that cannot
// carry it leaves the others all of their demand (the planner alone, given
// the flood, keeps no place for them); the flood gets what is left and the
// rest of it is reported held back.
func TestPlanOverloadSharesFairly(t *testing.T) {
	// ℓ(b) = b ms on one whole GPU with a 20 ms SLO: 1000 req/s at most.
	var pts []gpulet.Point
	for b := 1; b <= 32; b++ {
		pts = append(pts, gpulet.Point{Batch: b, Size: 100, P50MS: float64(b)})
	}
	prof := func(name string) *gpulet.Profile {
		p, err := gpulet.NewProfile(name, "t", 100, pts)
		require.NoError(t, err)
		return p
	}
	in := gpulet.Input{
		GPUs: []gpulet.GPU{{ID: "g0", Type: "t", MemoryMB: 1000, Backend: gpulet.BackendNone}},
		Demands: []gpulet.Demand{
			{Name: "flood", Profile: prof("flood"), SLOMS: 20, Rate: 4000},
			{Name: "a", Profile: prof("a"), SLOMS: 20, Rate: 50},
			{Name: "b", Profile: prof("b"), SLOMS: 20, Rate: 20},
		},
	}
	alone, err := gpulet.Run(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{})
	require.NoError(t, err)
	require.True(t, alone.Assigned()["a"] < 50 || alone.Assigned()["b"] < 20,
		"the case needs a planner that, given the flood, crowds the others out: %v", alone.Assigned())

	p, err := Plan(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{}, Headroom)
	require.NoError(t, err)
	got := p.Assigned()
	require.InDelta(t, 50, got["a"], 1e-9, "a model under its fair share gets all of its demand")
	require.InDelta(t, 20, got["b"], 1e-9)
	require.Greater(t, got["flood"], 600.0, "the flood gets what the others leave")
	require.NotContains(t, p.Unscheduled, "a")
	require.NotContains(t, p.Unscheduled, "b")
	require.InDelta(t, 4000-got["flood"], p.Unscheduled["flood"], 4)
	require.Contains(t, p.Reasons["flood"], "fair share")
	require.False(t, p.Schedulable, "a plan that holds demand back is not schedulable")
}
