package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/fakeep"
	"github.com/gpulet/gpuletd/modelzoo"
)

// randomInput returns an FP32 tensor of the given shape with values in
// [-1, 1) drawn from rng.
func randomInput(t testing.TB, name string, shape []int64, rng *rand.Rand) tensor.Tensor {
	t.Helper()
	n, err := tensor.NumElements(shape)
	require.NoError(t, err)
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = 2*rng.Float32() - 1
	}
	in, err := tensor.FromFloat32s(name, shape, vals)
	require.NoError(t, err)
	return in
}

func TestORTBatchMatchesSingleRuns(t *testing.T) {
	e := newCPU(t, 1)
	for _, name := range []string{"lenet5", "mlp"} {
		t.Run(name, func(t *testing.T) {
			zm, err := modelzoo.Lookup(name)
			require.NoError(t, err)
			path := zooModel(t, name)
			m, err := e.Load(context.Background(), ModelSpec{Name: name, Path: path, MaxBatchSize: 8})
			require.NoError(t, err)
			defer func() { require.NoError(t, m.Close()) }()
			require.Equal(t, []TensorSpec{{Name: zm.InputName, DataType: tensor.FP32, Shape: zm.InputShape[1:]}}, m.Inputs())
			require.Equal(t, []TensorSpec{{Name: zm.OutputName, DataType: tensor.FP32, Shape: zm.OutputShape[1:]}}, m.Outputs())

			rng := rand.New(rand.NewPCG(3, 4))
			rows := []int64{2, 1, 3, 1}
			reqs := make([][]tensor.Tensor, len(rows))
			for i, r := range rows {
				reqs[i] = []tensor.Tensor{randomInput(t, zm.InputName, append([]int64{r}, zm.InputShape[1:]...), rng)}
			}
			outs, info, err := m.Run(context.Background(), reqs, nil)
			require.NoError(t, err)
			require.Equal(t, 7, info.BatchSize)
			require.Equal(t, 1, info.Runs)
			require.False(t, info.Emulated)
			require.Positive(t, info.Compute)
			require.Positive(t, info.Input, "joining four requests' rows")
			require.Positive(t, info.Output, "splitting the outputs back")
			require.LessOrEqual(t, info.Input+info.Output, info.Overhead, "parts of the overhead")
			require.Len(t, outs, len(reqs))

			for i, req := range reqs {
				require.Len(t, outs[i], 1)
				got := outs[i][0]
				require.Equal(t, zm.OutputName, got.Name)
				require.Equal(t, append([]int64{rows[i]}, zm.OutputShape[1:]...), got.Shape)
				vals, err := req[0].Float32s()
				require.NoError(t, err)
				alone, err := onnxrt.RunFloat32(path, map[string]onnxrt.Float32Tensor{zm.InputName: {Shape: req[0].Shape, Data: vals}}, 1)
				require.NoError(t, err)
				gotVals, err := got.Float32s()
				require.NoError(t, err)
				want := alone[zm.OutputName]
				require.Equal(t, want.Shape, got.Shape)
				require.InDeltaSlice(t, want.Data, gotVals, 1e-5, "request %d", i)
			}
		})
	}
}

func TestORTModelThatDoesNotBatch(t *testing.T) {
	e := newCPU(t, 1)
	path := zooModel(t, "mlp")
	m, err := e.Load(context.Background(), ModelSpec{Name: "mlp", Path: path})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	require.Equal(t, 0, m.MaxBatchSize())
	require.Equal(t, []int64{-1, 784}, m.Inputs()[0].Shape, "full shape, batch dim included")

	rng := rand.New(rand.NewPCG(5, 6))
	reqs := [][]tensor.Tensor{
		{randomInput(t, "input", []int64{2, 784}, rng)},
		{randomInput(t, "input", []int64{1, 784}, rng)},
	}
	outs, info, err := m.Run(context.Background(), reqs, []string{"output"})
	require.NoError(t, err)
	require.Equal(t, 2, info.Runs, "one run per request")
	require.Equal(t, 2, info.BatchSize)
	for i, req := range reqs {
		vals, err := req[0].Float32s()
		require.NoError(t, err)
		alone, err := onnxrt.RunFloat32(path, map[string]onnxrt.Float32Tensor{"input": {Shape: req[0].Shape, Data: vals}}, 1)
		require.NoError(t, err)
		got, err := outs[i][0].Float32s()
		require.NoError(t, err)
		require.Equal(t, alone["output"].Shape, outs[i][0].Shape)
		require.InDeltaSlice(t, alone["output"].Data, got, 1e-5)
	}
}

func TestORTConcurrentRuns(t *testing.T) {
	e := newCPU(t, 1)
	m, err := e.Load(context.Background(), ModelSpec{Name: "mlp", Path: zooModel(t, "mlp"), MaxBatchSize: 4})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	rng := rand.New(rand.NewPCG(1, 1))
	in := randomInput(t, "input", []int64{1, 784}, rng)
	want, _, err := m.Run(context.Background(), [][]tensor.Tensor{{in}}, nil)
	require.NoError(t, err)

	var wg sync.WaitGroup
	results := make([][][]tensor.Tensor, 4)
	errs := make([]error, 4)
	for g := range results {
		wg.Go(func() {
			results[g], _, errs[g] = m.Run(context.Background(), [][]tensor.Tensor{{in}, {in}}, nil)
		})
	}
	wg.Wait()
	for g := range results {
		require.NoError(t, errs[g])
		require.Equal(t, want[0], results[g][0])
		require.Equal(t, want[0][0].Data, results[g][1][0].Data)
	}
}

func TestORTWarmup(t *testing.T) {
	e := newCPU(t, 1)
	m, err := e.Load(context.Background(), ModelSpec{Name: "lenet5", Path: zooModel(t, "lenet5"), MaxBatchSize: 8})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()

	res, err := m.Warmup(context.Background(), []int{1, 4, 8})
	require.NoError(t, err)
	require.Len(t, res.Batches, 3)
	for i, b := range []int{1, 4, 8} {
		require.Equal(t, b, res.Batches[i].Batch)
		require.Positive(t, res.Batches[i].Compute)
		require.Positive(t, res.Batches[i].Overhead)
	}
	require.Greater(t, res.Elapsed, res.Batches[0].Compute+res.Batches[1].Compute+res.Batches[2].Compute)

	_, err = m.Warmup(context.Background(), []int{9})
	require.ErrorIs(t, err, ErrInvalidSpec)
	require.ErrorContains(t, err, "batch 9 is outside 1..max_batch_size 8")
}

// A TorchScript file is refused by name, not read as a broken ONNX file:
// only the emulated engine serves one.
func TestORTRefusesTorchScript(t *testing.T) {
	e := newCPU(t, 1)
	path := filepath.Join(t.TempDir(), "model.pt")
	require.NoError(t, os.WriteFile(path, []byte("PK\x03\x04 a TorchScript archive"), 0o644))
	_, err := e.Load(context.Background(), ModelSpec{Name: "ts", Path: path, Platform: "torchscript", MaxBatchSize: 8})
	require.ErrorIs(t, err, ErrInvalidSpec)
	require.ErrorContains(t, err, "a torchscript file, which ONNX Runtime cannot run; export the model to ONNX")

	m, err := e.Load(context.Background(), ModelSpec{Name: "lenet5", Path: zooModel(t, "lenet5"), Platform: "onnxruntime", MaxBatchSize: 8})
	require.NoError(t, err)
	require.NoError(t, m.Close())
}

// A graph ONNX Runtime cannot run says why in ONNX Runtime's words, naming
// the model file once: before, the session's error and ONNX Runtime's text
// named it again, and the executor named the model twice.
func TestORTSaysWhyAGraphDoesNotLoad(t *testing.T) {
	e := newCPU(t, 1)
	b, err := modelzoo.BuildBytes("lenet5", 1)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "model.onnx")
	require.NoError(t, os.WriteFile(path, bytes.ReplaceAll(b, []byte("Conv"), []byte("Cxnv")), 0o644)) // an operator no domain has
	_, err = e.Load(context.Background(), ModelSpec{Name: "lenet5", Path: path, MaxBatchSize: 8})
	require.ErrorIs(t, err, ErrLoadFailed)
	require.ErrorContains(t, err, "No Op registered for Cxnv")
	require.True(t, strings.HasPrefix(err.Error(), "load model lenet5 from "+path+": load failed: "), err.Error())
	require.Equal(t, 1, strings.Count(err.Error(), path), err.Error())
}

func TestORTCloseAndInfo(t *testing.T) {
	initORT(t)
	e, err := NewORT(ORTOptions{IntraOpThreads: 2, DeviceName: "cpu0"})
	require.NoError(t, err)
	info := e.Info()
	require.Equal(t, KindONNXRuntime, info.Kind)
	require.Equal(t, ProviderCPU, info.Provider)
	require.Equal(t, 2, info.Threads)
	require.Equal(t, "cpu0", info.DeviceName)
	require.Equal(t, onnxrt.Version(), info.Version)
	require.NotEmpty(t, info.Version)
	require.Zero(t, info.SMCount)

	path := zooModel(t, "mlp")
	a, err := e.Load(context.Background(), ModelSpec{Name: "a", Path: path, MaxBatchSize: 2})
	require.NoError(t, err)
	b, err := e.Load(context.Background(), ModelSpec{Name: "b", Path: path, MaxBatchSize: 2})
	require.NoError(t, err)
	require.NoError(t, a.Close())
	require.NoError(t, a.Close(), "second close is a no-op")
	one := [][]tensor.Tensor{{randomInput(t, "input", []int64{1, 784}, rand.New(rand.NewPCG(1, 2)))}}
	_, _, err = a.Run(context.Background(), one, nil)
	require.ErrorIs(t, err, ErrClosed)
	_, _, err = b.Run(context.Background(), one, nil)
	require.NoError(t, err)

	require.NoError(t, e.Close())
	_, _, err = b.Run(context.Background(), one, nil)
	require.ErrorIs(t, err, ErrClosed, "closing the engine closes its models")
	_, err = e.Load(context.Background(), ModelSpec{Name: "c", Path: path, MaxBatchSize: 2})
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, e.Close())

	_, err = NewORT(ORTOptions{IntraOpThreads: -1})
	require.ErrorIs(t, err, ErrInvalidOptions)
	_, err = NewORT(ORTOptions{DeviceID: -1})
	require.ErrorIs(t, err, ErrInvalidOptions)
	def, err := NewORT(ORTOptions{})
	require.NoError(t, err)
	require.Positive(t, def.Info().Threads)
	require.NoError(t, def.Close())
}

func TestORTProviders(t *testing.T) {
	initORT(t)
	dir := t.TempDir()
	missingDep := filepath.Join(dir, "missing-dep")
	fakeep.Build(t, missingDep, onnxrt.CUDAProviderLibrary, fakeep.MissingDependency)
	failing := filepath.Join(dir, "failing")
	fakeep.Build(t, failing, onnxrt.CUDAProviderLibrary, fakeep.Failing)
	empty := filepath.Join(dir, "empty")
	fakeep.Build(t, empty, onnxrt.CUDAProviderLibrary, fakeep.Empty)
	fakeep.Build(t, empty, onnxrt.TensorRTProviderLibrary, fakeep.NotPlugin)
	tests := []struct {
		name     string
		provider string
		dir      string
		want     string
		missing  string
	}{
		{name: "cuda-not-fetched", provider: ProviderCUDA, dir: filepath.Join(dir, "none"),
			want: "CUDA cannot be used: register execution provider: execution provider library does not load: not installed: " + filepath.Join(dir, "none", onnxrt.CUDAProviderLibrary) + " does not exist (run make deps-gpu"},
		{name: "cuda-missing-library", provider: ProviderCUDA, dir: missingDep, missing: fakeep.MissingLibrary,
			want: fakeep.MissingLibrary + " not found: install"},
		{name: "cuda-failing", provider: ProviderCUDA, dir: failing, want: fakeep.Message},
		{name: "cuda-no-device", provider: ProviderCUDA, dir: empty, want: "CUDAExecutionProvider device: execution provider has no device (ONNX Runtime offers [CPUExecutionProvider/cpu]): no GPU is visible to CUDA"},
		{name: "tensorrt-not-plugin-then-cuda", provider: ProviderTensorRT, dir: empty,
			want: "execution provider has no device (ONNX Runtime offers [CPUExecutionProvider/cpu]): no GPU is visible to CUDA (CUDA_VISIBLE_DEVICES=\"\") (after tensorrt was asked for but execution provider unavailable: TensorRT cannot be used: as a plugin: register execution provider " + filepath.Join(empty, onnxrt.TensorRTProviderLibrary) + ": execution provider library does not load: Failed to get symbol CreateEpFactories"},
		{name: "unknown", provider: "rocm", want: `unknown execution provider "rocm"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewORT(ORTOptions{Provider: tt.provider, ProviderDir: tt.dir, IntraOpThreads: 1})
			require.ErrorIs(t, err, ErrProviderUnavailable)
			require.ErrorContains(t, err, tt.want)
			require.NotContains(t, err.Error(), "\n")
			var ml *MissingLibraryError
			require.Equal(t, tt.missing != "", errors.As(err, &ml))
			if tt.missing != "" {
				require.Equal(t, tt.missing, ml.Library)
				require.Equal(t, "CUDA", ml.Provider)
			}
			t.Log(err)

			// The same path runs when a model loads with the provider.
			_, err = (&ORT{opts: ORTOptions{Provider: tt.provider, ProviderDir: tt.dir, IntraOpThreads: 1}}).Load(context.Background(),
				ModelSpec{Name: "mlp", Path: zooModel(t, "mlp"), MaxBatchSize: 1})
			require.ErrorIs(t, err, ErrProviderUnavailable)
		})
	}
}

// A token id past the tokens model's vocabulary of 16 is refused by ONNX
// Runtime's Gather as an invalid argument: the run's error says the model
// rejected the inputs, which the executor answers as the request's own bad
// input; ids within it run.
func TestORTRejectedInput(t *testing.T) {
	e := newCPU(t, 1)
	m, err := e.Load(context.Background(), ModelSpec{Name: "tokens", Path: zooModel(t, "tokens"), MaxBatchSize: 8})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	ids := func(id uint64) []tensor.Tensor {
		data := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 1), id)
		x, err := tensor.New("ids", tensor.Int64, []int64{1, 2}, data)
		require.NoError(t, err)
		return []tensor.Tensor{x}
	}
	_, _, err = m.Run(context.Background(), [][]tensor.Tensor{ids(3)}, nil)
	require.NoError(t, err)
	_, _, err = m.Run(context.Background(), [][]tensor.Tensor{ids(99)}, nil)
	require.ErrorIs(t, err, ErrRunFailed)
	require.ErrorIs(t, err, ErrRejectedInput)
	require.ErrorContains(t, err, "out of data bounds")
}
