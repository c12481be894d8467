package onnxrt

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// TestSessionMatchesOnnxruntimeGo runs the same inputs through a Session
// and through onnxruntime_go's own session (RunFloat32): the answers agree,
// so the OrtApi positions Session uses (CreateSession, Run, the tensor and
// run-option calls) are the right ones.
func TestSessionMatchesOnnxruntimeGo(t *testing.T) {
	initORT(t)
	path, _ := writeZooModel(t, "mlp")
	rng := rand.New(rand.NewPCG(1, 2))
	vals := make([]float32, 3*784)
	for i := range vals {
		vals[i] = rng.Float32()*2 - 1
	}
	want, err := RunFloat32(path, map[string]Float32Tensor{"input": {Shape: []int64{3, 784}, Data: vals}}, 1)
	require.NoError(t, err)
	in, err := tensor.FromFloat32s("input", []int64{3, 784}, vals)
	require.NoError(t, err)
	got, err := Run(path, map[string]tensor.Tensor{"input": in}, 1)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "output", got[0].Name)
	require.Equal(t, want["output"].Shape, got[0].Shape)
	f, err := got[0].Float32s()
	require.NoError(t, err)
	require.Equal(t, want["output"].Data, f)
}

// TestSessionOutputsInPlace writes an output into a tensor the caller
// allocated.
func TestSessionOutputsInPlace(t *testing.T) {
	initORT(t)
	path, _ := writeZooModel(t, "mlp")
	so, err := ort.NewSessionOptions()
	require.NoError(t, err)
	defer func() { _ = so.Destroy() }()
	s, err := NewSession(path, []string{"input"}, []string{"output"}, so)
	require.NoError(t, err)
	defer s.Close()
	in, err := tensor.Zeros("input", tensor.FP32, []int64{2, 784})
	require.NoError(t, err)
	out, err := tensor.Zeros("output", tensor.FP32, []int64{2, 10})
	require.NoError(t, err)
	for i := range out.Data {
		out.Data[i] = 0xff // NaNs, which the run overwrites
	}
	outs := []tensor.Tensor{out}
	require.NoError(t, s.Run(context.Background(), []tensor.Tensor{in}, outs))
	f, err := out.Float32s()
	require.NoError(t, err)
	for _, v := range f {
		require.False(t, v != v, "the runtime wrote into the caller's buffer")
	}

	// Wrong counts and a wrong shape are errors, not crashes.
	require.ErrorContains(t, s.Run(context.Background(), nil, outs), "0 inputs and 1 outputs given")
	bad, err := tensor.Zeros("input", tensor.FP32, []int64{2, 783})
	require.NoError(t, err)
	require.Error(t, s.Run(context.Background(), []tensor.Tensor{bad}, make([]tensor.Tensor, 1)))
}

// TestSessionTerminate ends a long run through its context.
func TestSessionTerminate(t *testing.T) {
	initORT(t)
	path, _ := writeZooModel(t, "vgg")
	so, err := ort.NewSessionOptions()
	require.NoError(t, err)
	defer func() { _ = so.Destroy() }()
	require.NoError(t, so.SetIntraOpNumThreads(1))
	s, err := NewSession(path, []string{"input"}, []string{"output"}, so)
	require.NoError(t, err)
	defer s.Close()
	in, err := tensor.Zeros("input", tensor.FP32, []int64{32, 3, 224, 224})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = s.Run(ctx, []tensor.Tensor{in}, make([]tensor.Tensor, 1))
	require.ErrorIs(t, err, ErrTerminated)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}
