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
