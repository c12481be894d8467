package executor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/cudart"
	"github.com/gpulet/gpuletd/executor/engine"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// A failed batch of eight one-row requests, the sixth of which the model
// refuses, runs again in halves down to that request: six runs, every
// other request answered, and the sixth's own error kept.
func TestRunApartHalvesToTheBadRequest(t *testing.T) {
	f := &fakeRuntime{}
	j := &job{ctx: context.Background(), model: &modelEntry{rt: &fakeModel{f: f}}}
	for i := range 8 {
		v := float32(i)
		if i == 5 {
			v = -1
		}
		x, err := tensor.FromFloat32s("x", []int64{1, 4}, []float32{v, v, v, v})
		require.NoError(t, err)
		j.slots = append(j.slots, slot{req: &request{}})
		j.inputs = append(j.inputs, []tensor.Tensor{x})
	}
	require.True(t, canIsolate(j, engine.ErrRunFailed))

	outs, _, errs, fault := runApart(j, nil, nil)
	require.NoError(t, fault)
	require.Equal(t, []int{4, 4, 2, 1, 1, 2}, f.batchSizes(), "depth first: the failing half splits before the next half runs")
	for i := range 8 {
		if i == 5 {
			require.ErrorIs(t, errs[i], engine.ErrRejectedInput)
			require.Nil(t, outs[i])
			continue
		}
		require.NoError(t, errs[i])
		y, err := outs[i][0].Float32s()
		require.NoError(t, err)
		require.Equal(t, 2*float32(i), y[0])
	}
}

// A batch run in parts whose second part finds the device failed for
// good: the first part's rows keep their outputs, the second's fail with
// the fault, the third's did not run, and the running file names the part
// whose kernel raised it.
func TestRunPartsStopsAtADeviceFault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ex.sock.running")
	rf, err := CreateRunningFile(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rf.Close(path) })
	f := &fakeRuntime{}
	j := &job{ctx: context.Background(), model: &modelEntry{rt: &fakeModel{f: f}}}
	for i := range 4 {
		v := float32(i)
		if i == 2 {
			v = -1 // its run fails
		}
		x, err := tensor.FromFloat32s("x", []int64{1, 4}, []float32{v, v, v, v})
		require.NoError(t, err)
		j.slots = append(j.slots, slot{req: &request{}})
		j.inputs = append(j.inputs, []tensor.Tensor{x})
		j.ids = append(j.ids, uint64(100+i))
	}
	illegal := &cudart.ContextError{Code: 700, Name: "cudaErrorIllegalAddress", Text: "an illegal memory access was encountered"}
	checks := 0
	check := func(error) error { checks++; return illegal }
	outs, _, errs, fault := runParts(j, rf, [][][]int{{{0}, {1}}, {{2}}, {{3}}}, check)
	require.ErrorIs(t, fault, illegal)
	require.Equal(t, 1, checks)
	require.Equal(t, []int{2, 1}, f.batchSizes(), "the third part did not run")
	for i := range 2 {
		require.NoError(t, errs[i])
		require.NotNil(t, outs[i])
	}
	require.ErrorIs(t, errs[2], illegal)
	require.ErrorIs(t, errs[3], errPartNotRun)
	require.Equal(t, []uint64{102}, readRunning(path))
}

// A batch of one request's rows, a cancelled one, or one that failed
// otherwise than in the model's run is not run again.
func TestCanIsolate(t *testing.T) {
	one := &request{}
	j := &job{ctx: context.Background(), slots: []slot{{req: one}, {req: one}}}
	require.False(t, canIsolate(j, engine.ErrRunFailed), "one request's rows")
	j.slots = append(j.slots, slot{req: &request{}})
	require.True(t, canIsolate(j, engine.ErrRunFailed))
	require.False(t, canIsolate(j, nil))
	require.False(t, canIsolate(j, context.DeadlineExceeded), "not the model's run")
	fault := fmt.Errorf("%w: %w (found when a batch failed: %w)", ErrDeviceFault, errors.New("cudaErrorIllegalAddress"), engine.ErrRunFailed)
	require.False(t, canIsolate(j, fault), "the device failed for good")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j.ctx = ctx
	require.False(t, canIsolate(j, engine.ErrRunFailed), "cancelled")
}

// A flood of requests the model refuses makes a line every
// isolationLogEvery at most, saying how many batches went unsaid.
func TestIsolationLogLinesAreSpaced(t *testing.T) {
	var il isolationLog
	t0 := time.Unix(1000, 0)
	var said []int
	for i := range 100 {
		if more, ok := il.due(t0.Add(time.Duration(i) * 500 * time.Millisecond)); ok {
			said = append(said, more)
		}
	}
	require.Equal(t, []int{0, 19, 19, 19, 19}, said, "a line at 0, 10, 20, 30 and 40 s of 50")
}

// A request that failed run apart is bad input when the model refused its
// data, or when the model failed on it while other requests of its batch
// ran; otherwise the model's or the device's failure.
func TestApartErrCode(t *testing.T) {
	runtime := fmt.Errorf("run model m: %w: Non-zero status code returned while running Reshape node", engine.ErrRunFailed)
	refused := fmt.Errorf("run model m: %w: %w: index 9 out of range", engine.ErrRunFailed, engine.ErrRejectedInput)
	fault := fmt.Errorf("%w: %w (found when a batch failed: %w)", ErrDeviceFault, errors.New("cudaErrorIllegalAddress"), engine.ErrRunFailed)
	for _, tc := range []struct {
		name      string
		err       error
		othersRan bool
		want      pb.Code
	}{
		{"refused, others ran", refused, true, pb.Code_INVALID_ARGUMENT},
		{"refused, none ran", refused, false, pb.Code_INVALID_ARGUMENT},
		{"failed, others ran", runtime, true, pb.Code_INVALID_ARGUMENT},
		{"failed, none ran", runtime, false, pb.Code_INTERNAL},
		{"device fault, others ran", fault, true, pb.Code_INTERNAL},
		{"not the model's run, others ran", errors.New("engine returned 1 results for a batch of 2"), true, pb.Code_INTERNAL},
		{"cancelled", fmt.Errorf("run: %w", context.Canceled), true, pb.Code_UNAVAILABLE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, why := apartErrCode(tc.err, tc.othersRan)
			require.Equal(t, tc.want, code)
			require.Equal(t, tc.othersRan && errors.Is(tc.err, engine.ErrRunFailed) && code == pb.Code_INVALID_ARGUMENT && !errors.Is(tc.err, engine.ErrRejectedInput), why != "", "why: %q", why)
		})
	}
}
