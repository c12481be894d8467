package control

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

func TestMatch(t *testing.T) {
	let := func(size int, models ...string) gpulet.GPULet {
		l := gpulet.GPULet{Size: size}
		for _, m := range models {
			l.Models = append(l.Models, gpulet.Placement{Name: m})
		}
		return l
	}
	running := []Running{{Size: 50, Models: []string{"a"}}, {Size: 50, Models: []string{"b", "c"}}, {Size: 100, Models: []string{"d"}}}
	for _, tc := range []struct {
		name    string
		planned []gpulet.GPULet
		keep    []int
		retire  []int
	}{
		{"same layout", []gpulet.GPULet{let(50, "a"), let(50, "b", "c"), let(100, "d")}, []int{0, 1, 2}, nil},
		{"most models in common", []gpulet.GPULet{let(50, "c")}, []int{1}, []int{0, 2}},
		{"new size starts", []gpulet.GPULet{let(40, "a"), let(60, "b")}, []int{-1, -1}, []int{0, 1, 2}},
		{"each kept once", []gpulet.GPULet{let(100, "d"), let(100, "d")}, []int{2, -1}, []int{0, 1}},
		{"nothing planned", nil, []int{}, []int{0, 1, 2}},
	} {
		keep, retire := Match(running, tc.planned)
		require.Equal(t, tc.keep, keep, tc.name)
		require.Equal(t, tc.retire, retire, tc.name)
	}
}

func TestBatchCap(t *testing.T) {
	a, b := gpulet.Placement{Name: "a", Batch: 6}, gpulet.Placement{Name: "b"}
	require.Zero(t, BatchCap(gpulet.GPULet{Models: []gpulet.Placement{a}}, a), "alone: no cap")
	require.Equal(t, 6, BatchCap(gpulet.GPULet{Models: []gpulet.Placement{a, b}}, a))
	require.Equal(t, 1, BatchCap(gpulet.GPULet{Models: []gpulet.Placement{a, b}}, b))
}
