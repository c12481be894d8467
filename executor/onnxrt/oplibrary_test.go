package onnxrt

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/customop"
	"github.com/gpulet/gpuletd/modelzoo"
)

// TestOpLibraryRunsItsOperator opens a model whose graph uses an operator
// of its own: refused without the library that registers it, served with
// it, the answer the operator's (the input plus one).
func TestOpLibraryRunsItsOperator(t *testing.T) {
	initORT(t)
	path, _ := writeZooModel(t, modelzoo.CustomOpModel)
	lib := customop.Build(t, t.TempDir(), modelzoo.CustomOpLibrary, customop.AddOne)

	_, err := ReadModelInfo(path)
	require.ErrorIs(t, err, ErrInvalidModel)
	require.ErrorContains(t, err, modelzoo.CustomOpDomain+":"+modelzoo.CustomOpName+"(-1) is not a registered function/op (an operator of no standard set: name the library that registers it in the model's config.pbtxt, model_operations")
	other := customop.Build(t, t.TempDir(), "libother.so", customop.Unrelated)
	_, err = ReadModelInfo(path, other)
	require.ErrorContains(t, err, "is not a registered function/op (none of the libraries model_operations names registers it: "+other+")")
	info, err := ReadModelInfo(path, lib)
	require.NoError(t, err)
	require.Equal(t, []TensorInfo{{Name: "INPUT", DataType: tensor.FP32, Shape: []int64{-1, 4}}}, info.Inputs)

	so, err := ort.NewSessionOptions()
	require.NoError(t, err)
	defer func() { _ = so.Destroy() }()
	_, err = NewSession(path, []string{"INPUT"}, []string{"OUTPUT"}, so)
	require.ErrorContains(t, err, modelzoo.CustomOpName, "the operator is not registered")
	require.NoError(t, RegisterOpLibraries(so, []string{lib}))
	s, err := NewSession(path, []string{"INPUT"}, []string{"OUTPUT"}, so)
	require.NoError(t, err)
	defer s.Close()
	in, err := tensor.FromFloat32s("INPUT", []int64{2, 4}, []float32{0, 1, 2, 3, -1, -2, 0.5, 7})
	require.NoError(t, err)
	outs := make([]tensor.Tensor, 1)
	require.NoError(t, s.Run(context.Background(), []tensor.Tensor{in}, outs))
	require.Equal(t, []int64{2, 4}, outs[0].Shape)
	got, err := outs[0].Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{1, 2, 3, 4, 0, -1, 1.5, 8}, got)
}

// TestOpLibraryErrors: a library that is missing, not an operator library,
// or whose registration fails is an error naming it and saying why.
func TestOpLibraryErrors(t *testing.T) {
	initORT(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		lib  string
		want string
	}{
		{"missing", filepath.Join(dir, "libnothere.so"), "libnothere.so"},
		{"not an operator library", customop.Build(t, dir, "libplain.so", customop.NotLibrary), "RegisterCustomOps"},
		{"registration fails", customop.Build(t, dir, "libfails.so", customop.Failing), customop.Message},
	} {
		t.Run(tc.name, func(t *testing.T) {
			so, err := ort.NewSessionOptions()
			require.NoError(t, err)
			defer func() { _ = so.Destroy() }()
			err = RegisterOpLibraries(so, []string{tc.lib})
			require.ErrorIs(t, err, ErrOpLibrary)
			require.ErrorContains(t, err, "load custom operator library "+tc.lib)
			require.ErrorContains(t, err, tc.want)
			t.Log(err)
		})
	}
}
