package control

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

func TestBatchCap(t *testing.T) {
	a, b := gpulet.Placement{Name: "a", Batch: 6}, gpulet.Placement{Name: "b"}
	require.Zero(t, BatchCap(gpulet.GPULet{Models: []gpulet.Placement{a}}, a), "alone: no cap")
	require.Equal(t, 6, BatchCap(gpulet.GPULet{Models: []gpulet.Placement{a, b}}, a))
	require.Equal(t, 1, BatchCap(gpulet.GPULet{Models: []gpulet.Placement{a, b}}, b))
}

func TestRouteWeight(t *testing.T) {
	require.Equal(t, 12.5, RouteWeight(gpulet.Placement{Rate: 12.5}))
	require.Positive(t, RouteWeight(gpulet.Placement{}), "a placement without a rate is still routed to")
}
