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
