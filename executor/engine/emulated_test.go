package engine

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// fakeSleeper records what it is asked to sleep and returns at once, or,
// with block, waits for the context to end.
type fakeSleeper struct {
	mu    sync.Mutex
	slept []time.Duration
	block bool
	asked chan struct{} // closed-on-first-call signal when block is set
}

func (f *fakeSleeper) Sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.slept = append(f.slept, d)
	block, asked := f.block, f.asked
	f.mu.Unlock()
	if !block {
		return nil
	}
	if asked != nil {
		close(asked)
	}
	<-ctx.Done()
	return context.Cause(ctx)
}

func (f *fakeSleeper) durations() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.slept...)
}

// linear is ℓ(b) = 2 ms + b × 500 µs.
func linear(b int) time.Duration { return 2*time.Millisecond + time.Duration(b)*500*time.Microsecond }

// emuSpec is a two-input, two-output model: tokens INT64 [-1] and mask
// BOOL [-1] per row; logits FP16 [4] and ids INT32 [-1, 3] per row.
func emuSpec(maxBatch int, timing Timing) ModelSpec {
	return ModelSpec{
		Name:         "toy",
		MaxBatchSize: maxBatch,
		Inputs: []TensorSpec{
			{Name: "tokens", DataType: tensor.Int64, Shape: []int64{-1}},
			{Name: "mask", DataType: tensor.Bool, Shape: []int64{-1}},
		},
		Outputs: []TensorSpec{
			{Name: "logits", DataType: tensor.FP16, Shape: []int64{4}},
			{Name: "ids", DataType: tensor.Int32, Shape: []int64{-1, 3}},
		},
		Timing: timing,
	}
}

func toyRequest(t *testing.T, rows, length int64) []tensor.Tensor {
	t.Helper()
	tokens, err := tensor.Zeros("tokens", tensor.Int64, []int64{rows, length})
	require.NoError(t, err)
	mask, err := tensor.Zeros("mask", tensor.Bool, []int64{rows, length})
	require.NoError(t, err)
	return []tensor.Tensor{mask, tokens}
}

func TestEmulatedRun(t *testing.T) {
	tests := []struct {
		name       string
		maxBatch   int
		contention float64
		rows       []int64
		want       []time.Duration // asked of the sleeper
		batch      int
		runs       int
	}{
		{name: "one request", maxBatch: 8, rows: []int64{1}, want: []time.Duration{2500 * time.Microsecond}, batch: 1, runs: 1},
		{name: "rows add up", maxBatch: 8, rows: []int64{2, 1, 3}, want: []time.Duration{5 * time.Millisecond}, batch: 6, runs: 1},
		{name: "contention", maxBatch: 8, contention: 1.5, rows: []int64{2, 2}, want: []time.Duration{6 * time.Millisecond}, batch: 4, runs: 1},
		{name: "no batching", maxBatch: 0, rows: []int64{1, 1, 1}, want: []time.Duration{7500 * time.Microsecond}, batch: 3, runs: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sl := &fakeSleeper{}
			e := NewEmulated(EmulatedOptions{Sleeper: sl, DeviceName: "emu0"})
			defer func() { require.NoError(t, e.Close()) }()
			spec := emuSpec(tt.maxBatch, Timing{Latency: linear, Contention: tt.contention, Jitter: Jitter{Disabled: true}})
			if tt.maxBatch == 0 {
				spec.Inputs[0].Shape = []int64{1, -1}
				spec.Inputs[1].Shape = []int64{1, -1}
				spec.Outputs[0].Shape = []int64{1, 4}
				spec.Outputs[1].Shape = []int64{-1, 3}
			}
			m, err := e.Load(context.Background(), spec)
			require.NoError(t, err)
			reqs := make([][]tensor.Tensor, len(tt.rows))
			for i, r := range tt.rows {
				reqs[i] = toyRequest(t, r, int64(5+i))
			}
			outs, info, err := m.Run(context.Background(), reqs, nil)
			require.NoError(t, err)
			require.Equal(t, tt.want, sl.durations())
			require.Equal(t, RunInfo{BatchSize: tt.batch, Runs: tt.runs, Compute: tt.want[0], Overhead: info.Overhead, Input: info.Input, Output: info.Output, Emulated: true}, info)
			require.LessOrEqual(t, info.Input+info.Output, info.Overhead)
			for i, r := range tt.rows {
				require.Len(t, outs[i], 2)
				logits, ids := outs[i][0], outs[i][1]
				if tt.maxBatch == 0 {
					require.Equal(t, []int64{1, 4}, logits.Shape)
					require.Equal(t, []int64{1, 3}, ids.Shape, "-1 becomes 1")
				} else {
					require.Equal(t, []int64{r, 4}, logits.Shape)
					require.Equal(t, []int64{r, 1, 3}, ids.Shape, "-1 becomes 1")
				}
				require.Equal(t, tensor.FP16, logits.DataType)
				require.Equal(t, tensor.Int32, ids.DataType)
				require.NoError(t, logits.Check())
				require.NoError(t, ids.Check())
				require.Equal(t, make([]byte, len(logits.Data)), logits.Data)
				require.Equal(t, make([]byte, len(ids.Data)), ids.Data)
			}

			// Only the outputs asked for, in the order asked.
			outs, _, err = m.Run(context.Background(), reqs[:1], []string{"ids"})
			require.NoError(t, err)
			require.Len(t, outs[0], 1)
			require.Equal(t, "ids", outs[0][0].Name)
		})
	}
}

func TestEmulatedInfoAndClose(t *testing.T) {
	e := NewEmulated(EmulatedOptions{Sleeper: &fakeSleeper{}, DeviceName: "emu0"})
	require.Equal(t, Info{Kind: KindEmulated, Provider: KindEmulated, DeviceName: "emu0"}, e.Info())
	m, err := e.Load(context.Background(), emuSpec(4, Timing{Latency: linear}))
	require.NoError(t, err)
	require.Equal(t, 4, m.MaxBatchSize())
	require.Equal(t, emuSpec(4, Timing{}).Inputs, m.Inputs())
	require.NoError(t, e.Close())
	_, _, err = m.Run(context.Background(), [][]tensor.Tensor{toyRequest(t, 1, 1)}, nil)
	require.ErrorIs(t, err, ErrClosed)
	_, err = e.Load(context.Background(), emuSpec(4, Timing{Latency: linear}))
	require.ErrorIs(t, err, ErrClosed)
}

func TestEmulatedLoadErrors(t *testing.T) {
	tests := []struct {
		name   string
		spec   ModelSpec
		wantIs error
		want   string
	}{
		{name: "no latency", spec: emuSpec(4, Timing{}), wantIs: ErrInvalidSpec, want: "no latency function"},
		{name: "negative contention", spec: emuSpec(4, Timing{Latency: linear, Contention: -1}), wantIs: ErrInvalidSpec, want: "contention -1"},
		{name: "nan contention", spec: emuSpec(4, Timing{Latency: linear, Contention: math.NaN()}), wantIs: ErrInvalidSpec, want: "contention NaN"},
		{name: "negative jitter", spec: emuSpec(4, Timing{Latency: linear, Jitter: Jitter{CV: -0.1}}), wantIs: ErrInvalidSpec, want: "coefficient of variation -0.1"},
		{name: "no outputs", spec: func() ModelSpec { s := emuSpec(4, Timing{Latency: linear}); s.Outputs = nil; return s }(), wantIs: ErrInvalidSpec, want: "no outputs"},
	}
	e := NewEmulated(EmulatedOptions{Sleeper: &fakeSleeper{}})
	defer func() { require.NoError(t, e.Close()) }()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.Load(context.Background(), tt.spec)
			require.ErrorIs(t, err, tt.wantIs)
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, err, "load model toy")
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.Load(ctx, emuSpec(4, Timing{Latency: linear}))
	require.ErrorIs(t, err, ErrCancelled)
}

func TestEmulatedCancel(t *testing.T) {
	sl := &fakeSleeper{block: true, asked: make(chan struct{})}
	e := NewEmulated(EmulatedOptions{Sleeper: sl})
	defer func() { require.NoError(t, e.Close()) }()
	m, err := e.Load(context.Background(), emuSpec(4, Timing{Latency: linear}))
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, _, err := m.Run(ctx, [][]tensor.Tensor{toyRequest(t, 2, 3)}, nil)
		done <- err
	}()
	<-sl.asked // the run is sleeping
	cancel()
	err = <-done
	require.ErrorIs(t, err, ErrCancelled)
	require.ErrorIs(t, err, context.Canceled)
}

func TestRealSleeper(t *testing.T) {
	var s RealSleeper
	require.NoError(t, s.Sleep(context.Background(), 0))
	require.NoError(t, s.Sleep(context.Background(), time.Microsecond))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Sleep(ctx, time.Hour), context.Canceled)

	// Cancelled while sleeping: returns with the cause, long before an hour.
	ctx, cancelCause := context.WithCancelCause(context.Background())
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-time.After(5 * time.Millisecond):
			cancelCause(context.DeadlineExceeded)
		case <-stop:
		}
	}()
	require.ErrorIs(t, s.Sleep(ctx, time.Hour), context.DeadlineExceeded)
}

func TestEmulatedJitter(t *testing.T) {
	const n = 20000
	sample := func(j Jitter) []time.Duration {
		sl := &fakeSleeper{}
		e := NewEmulated(EmulatedOptions{Sleeper: sl})
		defer func() { require.NoError(t, e.Close()) }()
		m, err := e.Load(context.Background(), emuSpec(1, Timing{Latency: func(int) time.Duration { return 10 * time.Millisecond }, Jitter: j}))
		require.NoError(t, err)
		req := [][]tensor.Tensor{toyRequest(t, 1, 1)}
		for range n {
			_, _, err := m.Run(context.Background(), req, nil)
			require.NoError(t, err)
		}
		return sl.durations()
	}
	stats := func(ds []time.Duration) (mean, cv float64) {
		var sum, sq float64
		for _, d := range ds {
			sum += float64(d)
		}
		mean = sum / float64(len(ds))
		for _, d := range ds {
			sq += (float64(d) - mean) * (float64(d) - mean)
		}
		return mean, math.Sqrt(sq/float64(len(ds)-1)) / mean
	}
	tests := []struct {
		name   string
		jitter Jitter
		cv     float64
	}{
		{name: "default", jitter: Jitter{Seed: 1}, cv: DefaultJitterCV},
		{name: "ten percent", jitter: Jitter{Seed: 2, CV: 0.1}, cv: 0.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds := sample(tt.jitter)
			mean, cv := stats(ds)
			// Standard errors at n=20000: mean ≈ cv/141, cv ≈ cv/200; the
			// bounds are several of them wide.
			require.InEpsilon(t, float64(10*time.Millisecond), mean, 5*tt.cv/141+1e-4)
			require.InEpsilon(t, tt.cv, cv, 0.05)
			require.Equal(t, ds[:50], sample(tt.jitter)[:50], "the same seed repeats")
		})
	}
	off := sample(Jitter{Disabled: true})
	for _, d := range off[:100] {
		require.Equal(t, 10*time.Millisecond, d)
	}
}

func TestEmulatedWarmupDoesNotSleep(t *testing.T) {
	sl := &fakeSleeper{}
	e := NewEmulated(EmulatedOptions{Sleeper: sl})
	defer func() { require.NoError(t, e.Close()) }()
	m, err := e.Load(context.Background(), emuSpec(8, Timing{Latency: linear, Jitter: Jitter{Disabled: true}}))
	require.NoError(t, err)
	res, err := m.Warmup(context.Background(), []int{1, 8})
	require.NoError(t, err)
	require.Empty(t, sl.durations())
	require.Equal(t, []int{1, 8}, []int{res.Batches[0].Batch, res.Batches[1].Batch})
	require.Equal(t, linear(1), res.Batches[0].Compute)
	require.Equal(t, linear(8), res.Batches[1].Compute)
	_, err = m.Warmup(context.Background(), []int{0})
	require.ErrorIs(t, err, ErrInvalidSpec)
}
