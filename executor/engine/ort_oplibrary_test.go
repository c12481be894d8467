package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/customop"
	"github.com/gpulet/gpuletd/modelzoo"
)

// TestORTOpLibraries loads a model whose graph needs a custom operator:
// refused without its library, saying which operator; refused with a
// library whose registration fails, saying why; served with it, at every
// graph optimization level and in the sessions of fixed shapes, each
// answer the operator's.
func TestORTOpLibraries(t *testing.T) {
	initORT(t)
	path := zooModel(t, modelzoo.CustomOpModel)
	dir := t.TempDir()
	lib := customop.Build(t, dir, modelzoo.CustomOpLibrary, customop.AddOne)
	failing := customop.Build(t, dir, "libfails.so", customop.Failing)
	spec := ModelSpec{Name: "add-one", Path: path, MaxBatchSize: 8}

	e := newCPU(t, 1)
	_, err := e.Load(context.Background(), spec)
	require.ErrorIs(t, err, ErrLoadFailed)
	require.ErrorContains(t, err, modelzoo.CustomOpName+"(-1) is not a registered function/op (an operator of no standard set: name the library")
	bad := spec
	bad.OpLibraries = []string{lib, failing}
	_, err = e.Load(context.Background(), bad)
	require.ErrorIs(t, err, ErrLoadFailed)
	require.ErrorContains(t, err, "load custom operator library "+failing)
	require.ErrorContains(t, err, customop.Message)

	fixed, err := NewORT(ORTOptions{IntraOpThreads: 1, FixedShapes: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, fixed.Close()) })
	for _, tc := range []struct {
		name  string
		e     *ORT
		level int
	}{
		{"all", e, 0}, {"basic", e, GraphLevelBasic}, {"extended", e, GraphLevelExtended}, {"fixed shapes", fixed, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec
			s.OpLibraries, s.GraphLevel = []string{lib}, tc.level
			m, err := tc.e.Load(context.Background(), s)
			require.NoError(t, err)
			defer func() { require.NoError(t, m.Close()) }()
			a, err := tensor.FromFloat32s("INPUT", []int64{2, 4}, []float32{0, 1, 2, 3, 4, 5, 6, 7})
			require.NoError(t, err)
			b, err := tensor.FromFloat32s("INPUT", []int64{1, 4}, []float32{-1, -2, -3, -4})
			require.NoError(t, err)
			outs, info, err := m.Run(context.Background(), [][]tensor.Tensor{{a}, {b}}, nil)
			require.NoError(t, err)
			require.Equal(t, 3, info.BatchSize)
			got := [][]float32{}
			for _, o := range outs {
				f, err := o[0].Float32s()
				require.NoError(t, err)
				got = append(got, f)
			}
			require.Equal(t, [][]float32{{1, 2, 3, 4, 5, 6, 7, 8}, {0, -1, -2, -3}}, got)
		})
	}
}
