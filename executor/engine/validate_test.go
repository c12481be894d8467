package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// lenetBoth loads lenet5 (max batch 4) on the onnxruntime engine and, with
// the same specs, on the emulated engine.
func lenetBoth(t *testing.T) map[string]Loaded {
	t.Helper()
	ortModel, err := newCPU(t, 1).Load(context.Background(), ModelSpec{Name: "lenet5", Path: zooModel(t, "lenet5"), MaxBatchSize: 4})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ortModel.Close()) })
	emu := NewEmulated(EmulatedOptions{Sleeper: &fakeSleeper{}})
	t.Cleanup(func() { require.NoError(t, emu.Close()) })
	emuModel, err := emu.Load(context.Background(), ModelSpec{
		Name: "lenet5", MaxBatchSize: 4, Inputs: ortModel.Inputs(), Outputs: ortModel.Outputs(),
		Timing: Timing{Latency: func(b int) time.Duration { return time.Duration(b) * time.Millisecond }},
	})
	require.NoError(t, err)
	return map[string]Loaded{"onnxruntime": ortModel, "emulated": emuModel}
}

func TestValidateAndRunRejectBadRequests(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	good := func(rows int64) tensor.Tensor { return randomInput(t, "input", []int64{rows, 1, 28, 28}, rng) }
	short := good(1)
	short.Data = short.Data[:len(short.Data)-4]
	fp64, err := tensor.Zeros("input", tensor.FP64, []int64{1, 1, 28, 28})
	require.NoError(t, err)
	renamed := good(1)
	renamed.Name = "image"

	tests := []struct {
		name    string
		req     []tensor.Tensor
		tensor  string
		problem string
	}{
		{name: "wrong dtype", req: []tensor.Tensor{fp64}, tensor: "input", problem: "data type FP64, model wants FP32"},
		{name: "wrong shape", req: []tensor.Tensor{randomInput(t, "input", []int64{1, 1, 28, 27}, rng)}, tensor: "input",
			problem: "shape [1 1 28 27] does not match [rows 1 28 28]"},
		{name: "no batch dim", req: []tensor.Tensor{randomInput(t, "input", []int64{1, 28, 28}, rng)}, tensor: "input",
			problem: "shape [1 28 28] does not match [rows 1 28 28]"},
		{name: "byte length", req: []tensor.Tensor{short}, tensor: "input", problem: "3132 bytes, shape [1 1 28 28] of FP32 needs 3136"},
		{name: "unknown input", req: []tensor.Tensor{renamed}, tensor: "image", problem: "not an input of model lenet5 (inputs: [input])"},
		{name: "missing input", req: nil, tensor: "input", problem: "missing"},
		{name: "input twice", req: []tensor.Tensor{good(1), good(1)}, tensor: "input", problem: "given twice"},
		{name: "too many rows", req: []tensor.Tensor{good(5)}, tensor: "input", problem: "5 rows, more than max_batch_size 4"},
		{name: "no rows", req: []tensor.Tensor{{Name: "input", DataType: tensor.FP32, Shape: []int64{0, 1, 28, 28}}}, tensor: "input",
			problem: "shape [0 1 28 28] has no rows"},
	}
	for kind, m := range lenetBoth(t) {
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				err := m.Validate(tt.req)
				require.ErrorIs(t, err, ErrInvalidInput)
				var ie *InputError
				require.ErrorAs(t, err, &ie)
				require.Equal(t, InputError{Request: -1, Kind: "input", Tensor: tt.tensor, Problem: tt.problem}, *ie)
				require.EqualError(t, err, fmt.Sprintf("validate input %q: invalid input: %s", tt.tensor, tt.problem))

				// In a batch, the bad request is named and its batch-mates
				// are not.
				_, _, err = m.Run(context.Background(), [][]tensor.Tensor{{good(1)}, tt.req, {good(1)}}, nil)
				require.ErrorIs(t, err, ErrInvalidInput)
				require.Equal(t, []int{1}, InvalidRequests(err))
				require.ErrorContains(t, err, fmt.Sprintf("validate request 1 input %q: invalid input: %s", tt.tensor, tt.problem))
			})
		}
		t.Run(kind+"/several bad", func(t *testing.T) {
			_, _, err := m.Run(context.Background(), [][]tensor.Tensor{{fp64}, {good(2)}, {short}, nil}, nil)
			require.ErrorIs(t, err, ErrInvalidInput)
			require.Equal(t, []int{0, 2, 3}, InvalidRequests(err))
		})
		t.Run(kind+"/unknown output", func(t *testing.T) {
			err := m.ValidateOutputs([]string{"output", "logits"})
			require.ErrorIs(t, err, ErrInvalidInput)
			require.EqualError(t, err, `validate output "logits": invalid input: not an output of model lenet5 (outputs: [output])`)
			_, _, err = m.Run(context.Background(), [][]tensor.Tensor{{good(1)}}, []string{"logits"})
			require.ErrorIs(t, err, ErrInvalidInput)
			require.ErrorContains(t, err, `output "logits"`)
			require.Empty(t, InvalidRequests(err), "the output list is the batch's, no request is to blame")
			require.ErrorContains(t, m.ValidateOutputs([]string{"output", "output"}), "asked twice")
			require.NoError(t, m.ValidateOutputs(nil))
			require.NoError(t, m.ValidateOutputs([]string{"output"}))
		})
		t.Run(kind+"/batch too large", func(t *testing.T) {
			_, _, err := m.Run(context.Background(), [][]tensor.Tensor{{good(2)}, {good(2)}, {good(1)}}, nil)
			require.ErrorIs(t, err, ErrBatchTooLarge)
			require.NotErrorIs(t, err, ErrInvalidInput)
			require.ErrorContains(t, err, "5 rows in 3 requests, max_batch_size 4")
		})
		t.Run(kind+"/good", func(t *testing.T) {
			require.NoError(t, m.Validate([]tensor.Tensor{good(4)}))
			outs, info, err := m.Run(context.Background(), [][]tensor.Tensor{{good(3)}, {good(1)}}, nil)
			require.NoError(t, err)
			require.Equal(t, 4, info.BatchSize)
			require.Equal(t, []int64{3, 10}, outs[0][0].Shape)
			require.Equal(t, []int64{1, 10}, outs[1][0].Shape)
			outs, _, err = m.Run(context.Background(), nil, nil)
			require.NoError(t, err)
			require.Empty(t, outs)
		})
	}
}

func TestValidateBool(t *testing.T) {
	l, err := newLayout("m", 2, []TensorSpec{{Name: "mask", DataType: tensor.Bool, Shape: []int64{2}}}, []TensorSpec{{Name: "y", DataType: tensor.FP32}})
	require.NoError(t, err)
	_, rows, err := l.validate([]tensor.Tensor{{Name: "mask", DataType: tensor.Bool, Shape: []int64{2, 2}, Data: []byte{0, 1, 1, 0}}})
	require.NoError(t, err)
	require.Equal(t, int64(2), rows)
	_, _, err = l.validate([]tensor.Tensor{{Name: "mask", DataType: tensor.Bool, Shape: []int64{1, 2}, Data: []byte{1, 7}}})
	require.ErrorIs(t, err, ErrInvalidInput)
	require.ErrorContains(t, err, "BOOL element 1 is 7, want 0 or 1")
}

func TestValidateRowsAgree(t *testing.T) {
	l, err := newLayout("m", 8,
		[]TensorSpec{{Name: "a", DataType: tensor.Int64, Shape: []int64{-1}}, {Name: "b", DataType: tensor.Int32, Shape: nil}},
		[]TensorSpec{{Name: "y", DataType: tensor.FP32}})
	require.NoError(t, err)
	a, err := tensor.Zeros("a", tensor.Int64, []int64{2, 5})
	require.NoError(t, err)
	b, err := tensor.Zeros("b", tensor.Int32, []int64{3})
	require.NoError(t, err)
	_, _, err = l.validate([]tensor.Tensor{b, a})
	require.ErrorIs(t, err, ErrInvalidInput)
	require.EqualError(t, err, `validate input "b": invalid input: 3 rows, input "a" has 2`)
	b.Shape, b.Data = []int64{2}, b.Data[:8]
	ordered, rows, err := l.validate([]tensor.Tensor{b, a})
	require.NoError(t, err)
	require.Equal(t, int64(2), rows)
	require.Equal(t, []string{"a", "b"}, []string{ordered[0].Name, ordered[1].Name}, "model order")
}

func TestInvalidRequests(t *testing.T) {
	require.Nil(t, InvalidRequests(nil))
	require.Nil(t, InvalidRequests(errors.New("x")))
	joined := fmt.Errorf("run: %w", errors.Join(
		&InputError{Request: 4, Kind: "input", Tensor: "x"},
		&InputError{Request: 1, Kind: "input", Tensor: "x"},
		&InputError{Request: 4, Kind: "input", Tensor: "y"},
		&InputError{Request: -1, Kind: "output", Tensor: "z"},
	))
	require.Equal(t, []int{1, 4}, InvalidRequests(joined))
}

func TestLayoutSpecErrors(t *testing.T) {
	fp := func(name string, shape ...int64) TensorSpec {
		return TensorSpec{Name: name, DataType: tensor.FP32, Shape: shape}
	}
	tests := []struct {
		name     string
		maxBatch int
		inputs   []TensorSpec
		outputs  []TensorSpec
		wantIs   error
		want     string
	}{
		{name: "negative max batch", maxBatch: -1, inputs: []TensorSpec{fp("x")}, outputs: []TensorSpec{fp("y")}, wantIs: ErrInvalidSpec, want: "max_batch_size -1"},
		{name: "no inputs", outputs: []TensorSpec{fp("y")}, wantIs: ErrInvalidSpec, want: "no inputs"},
		{name: "no outputs", inputs: []TensorSpec{fp("x")}, wantIs: ErrInvalidSpec, want: "no outputs"},
		{name: "unnamed", inputs: []TensorSpec{fp("")}, outputs: []TensorSpec{fp("y")}, wantIs: ErrInvalidSpec, want: "an input has no name"},
		{name: "twice", inputs: []TensorSpec{fp("x"), fp("x")}, outputs: []TensorSpec{fp("y")}, wantIs: ErrInvalidSpec, want: `input "x" is listed twice`},
		{name: "bad dtype", inputs: []TensorSpec{{Name: "x", DataType: "F32"}}, outputs: []TensorSpec{fp("y")}, wantIs: ErrInvalidSpec, want: `data type "F32"`},
		{name: "bad dim", inputs: []TensorSpec{fp("x", 3, -2)}, outputs: []TensorSpec{fp("y")}, wantIs: ErrInvalidSpec, want: `dimension 1 is -2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newLayout("m", tt.maxBatch, tt.inputs, tt.outputs)
			require.ErrorIs(t, err, tt.wantIs)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
