package control

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

// linearProfile is ℓ(b) = b ms at size 50, batches 1..16.
func linearProfile(t *testing.T) *gpulet.Profile {
	t.Helper()
	var pts []gpulet.Point
	for b := 1; b <= 16; b++ {
		pts = append(pts, gpulet.Point{Batch: b, Size: 50, P50MS: float64(b)})
	}
	p, err := gpulet.NewProfile("a", "t", 100, pts)
	require.NoError(t, err)
	return p
}

func TestBatchCap(t *testing.T) {
	prof := linearProfile(t)
	// a runs 4 ms batches of 4 in a 10 ms cycle: alone it may not wait more
	// than 20 ms, so its own batch may grow to 10 ms (b = 10).
	a := gpulet.Placement{Name: "a", Batch: 4, LatencyMS: 4, Factor: 1, SLOMS: 20, WorstMS: 14}
	for _, tc := range []struct {
		name   string
		let    gpulet.GPULet
		pl     gpulet.Placement
		prof   *gpulet.Profile
		expect int
	}{
		{"alone: no cap", gpulet.GPULet{DutyMS: 10, Models: []gpulet.Placement{a}}, a, prof, 0},
		{"neighbour without slack: the plan's batch", gpulet.GPULet{DutyMS: 10, Models: []gpulet.Placement{a,
			{Name: "b", Batch: 1, SLOMS: 16, WorstMS: 16}}}, a, prof, 4},
		{"neighbour with 3 ms of slack: 3 more", gpulet.GPULet{DutyMS: 10, Models: []gpulet.Placement{a,
			{Name: "b", Batch: 1, SLOMS: 19, WorstMS: 16}}}, a, prof, 7},
		{"two neighbours share their slack", gpulet.GPULet{DutyMS: 10, Models: []gpulet.Placement{a,
			{Name: "b", Batch: 1, SLOMS: 22, WorstMS: 16}, {Name: "c", Batch: 1, SLOMS: 100, WorstMS: 16}}}, a, prof, 7},
		{"own SLO bounds it", gpulet.GPULet{DutyMS: 10, Models: []gpulet.Placement{a,
			{Name: "b", Batch: 1, SLOMS: 100, WorstMS: 16}}}, a, prof, 10},
		{"interference slows the larger batches", gpulet.GPULet{DutyMS: 10, Models: []gpulet.Placement{
			{Name: "a", Batch: 4, LatencyMS: 8, Factor: 2, SLOMS: 20, WorstMS: 18},
			{Name: "b", Batch: 1, SLOMS: 100, WorstMS: 16}}}, gpulet.Placement{Name: "a", Batch: 4, LatencyMS: 8, Factor: 2, SLOMS: 20, WorstMS: 18}, prof, 5},
		{"no profile: the plan's batch", gpulet.GPULet{DutyMS: 10, Models: []gpulet.Placement{a,
			{Name: "b", Batch: 1, SLOMS: 100, WorstMS: 16}}}, a, nil, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.let.Size = 50
			require.Equal(t, tc.expect, BatchCap(tc.let, tc.pl, tc.prof))
		})
	}
}

func TestRouteWeight(t *testing.T) {
	require.Equal(t, 12.5, RouteWeight(gpulet.Placement{Rate: 12.5}))
	require.Positive(t, RouteWeight(gpulet.Placement{}), "a placement without a rate is still routed to")
}

func TestLatencyPoints(t *testing.T) {
	prof := linearProfile(t)
	pts := LatencyPoints(prof, 50, 4)
	require.Len(t, pts, 4)
	require.Equal(t, 4, pts[3].Batch)
	require.InDelta(t, 4.0, pts[3].MS, 1e-9)
	require.Len(t, LatencyPoints(prof, 50, 20), 16, "it stops where the profile ends")
}
