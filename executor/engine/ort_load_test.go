package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
)

func TestORTLoadErrors(t *testing.T) {
	e := newCPU(t, 1)
	dir := t.TempDir()
	lenet := zooModel(t, "lenet5")
	good, err := os.ReadFile(lenet)
	require.NoError(t, err)
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	corrupt := filepath.Join(dir, "corrupt.onnx")
	require.NoError(t, os.WriteFile(corrupt, random, 0o644))
	truncated := filepath.Join(dir, "truncated.onnx")
	require.NoError(t, os.WriteFile(truncated, good[:len(good)/2], 0o644))
	missing := filepath.Join(dir, "missing.onnx")

	fp := func(name string, shape ...int64) []TensorSpec {
		return []TensorSpec{{Name: name, DataType: tensor.FP32, Shape: shape}}
	}
	tests := []struct {
		name   string
		spec   ModelSpec
		wantIs error
		want   []string // substrings
	}{
		{name: "corrupt bytes", spec: ModelSpec{Name: "m", Path: corrupt, MaxBatchSize: 4}, wantIs: onnxrt.ErrInvalidModel,
			want: []string{"load model m from " + corrupt, "invalid onnx model"}},
		{name: "truncated", spec: ModelSpec{Name: "m", Path: truncated, MaxBatchSize: 4}, wantIs: onnxrt.ErrInvalidModel,
			want: []string{truncated, "Protobuf parsing failed"}},
		{name: "missing file", spec: ModelSpec{Name: "m", Path: missing}, wantIs: os.ErrNotExist, want: []string{missing}},
		{name: "no path", spec: ModelSpec{Name: "m"}, wantIs: ErrInvalidSpec, want: []string{"load model m: invalid model spec: no model file"}},
		{name: "config dtype", spec: ModelSpec{Name: "m", Path: lenet, MaxBatchSize: 4,
			Inputs: []TensorSpec{{Name: "input", DataType: tensor.FP16, Shape: []int64{1, 28, 28}}}},
			wantIs: ErrInvalidSpec, want: []string{`input "input" is FP32 in the model, FP16 in the configuration`}},
		{name: "config unknown", spec: ModelSpec{Name: "m", Path: lenet, MaxBatchSize: 4, Outputs: fp("probs", 10)},
			wantIs: ErrInvalidSpec, want: []string{`output "probs" is not in the model (outputs: [output])`}},
		{name: "config shape", spec: ModelSpec{Name: "m", Path: lenet, MaxBatchSize: 4, Inputs: fp("input", 1, 32, 32)},
			wantIs: ErrInvalidSpec, want: []string{`input "input" has shape [1 28 28] in the model, [1 32 32] in the configuration`}},
		{name: "config with batch dim", spec: ModelSpec{Name: "m", Path: lenet, MaxBatchSize: 4, Inputs: fp("input", -1, 1, 28, 28)},
			wantIs: ErrInvalidSpec, want: []string{`has shape [1 28 28] in the model, [-1 1 28 28] in the configuration`}},
		{name: "config bad dim", spec: ModelSpec{Name: "m", Path: lenet, MaxBatchSize: 4, Inputs: fp("input", 1, -5, 28)},
			wantIs: ErrInvalidSpec, want: []string{`dimension 1 is -5`}},
		{name: "negative max batch", spec: ModelSpec{Name: "m", Path: lenet, MaxBatchSize: -1},
			wantIs: ErrInvalidSpec, want: []string{"max_batch_size -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.Load(context.Background(), tt.spec)
			require.ErrorIs(t, err, tt.wantIs)
			for _, w := range tt.want {
				require.ErrorContains(t, err, w)
			}
			require.NotContains(t, err.Error(), "\n")
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = e.Load(ctx, ModelSpec{Name: "m", Path: lenet, MaxBatchSize: 4})
	require.ErrorIs(t, err, ErrCancelled)
}

func TestORTCancel(t *testing.T) {
	e := newCPU(t, 2)
	m, err := e.Load(context.Background(), ModelSpec{Name: "resnet18", Path: zooModel(t, "resnet18"), MaxBatchSize: 8})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	rng := rand.New(rand.NewPCG(1, 8))
	batch := [][]tensor.Tensor{{randomInput(t, "input", []int64{8, 3, 224, 224}, rng)}}

	start := time.Now()
	want, full, err := m.Run(context.Background(), batch, nil)
	require.NoError(t, err)
	t.Logf("uncancelled batch of 8: %v (compute %v)", time.Since(start), full.Compute)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, info, err := m.Run(ctx, batch, nil)
	require.ErrorIs(t, err, ErrCancelled)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 1, info.Runs, "the run started and was stopped")
	t.Logf("cancelled after 10ms: returned after %v", time.Since(start))

	pre, cancelNow := context.WithCancelCause(context.Background())
	preempted := errors.New("preempted by a smaller batch")
	cancelNow(preempted)
	_, _, err = m.Run(pre, batch, nil)
	require.ErrorIs(t, err, ErrCancelled)
	require.ErrorIs(t, err, preempted, "the cause is kept")

	// The session still serves, with the same result.
	got, _, err := m.Run(context.Background(), batch, nil)
	require.NoError(t, err)
	require.Equal(t, want, got)
}
