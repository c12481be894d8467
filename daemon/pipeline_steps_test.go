package daemon

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// branchRun is a pipeline request whose steps, written join, left, right,
// run as left and right on the request's "image" at once, then join on
// what both wrote, through send.
func branchRun(t *testing.T, send stepSender) (*pipelineRun, map[string]tensor.Tensor) {
	t.Helper()
	n := &node{log: zap.NewNop(), router: newRouter(), rates: newRateMeter(0.5, time.Now()), stepRates: newRateMeter(0.5, time.Now()),
		catalog: newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), nil, nil, zap.NewNop())}
	n.metrics = newMetrics(n)
	model := func(name string, ins ...string) *repository.Model {
		m := &repository.Model{Name: name, Family: name}
		for _, in := range ins {
			m.Inputs = append(m.Inputs, repository.TensorSpec{Name: in})
		}
		return m
	}
	e := &repository.Ensemble{FanoutStep: -1, FanoutWriter: -1, Steps: []repository.EnsembleStep{
		{Model: "left", At: 1, Inputs: map[string]string{"in": "image"}, Outputs: map[string]string{"y": "l"}},
		{Model: "right", At: 2, Inputs: map[string]string{"in": "image"}, Outputs: map[string]string{"y": "r"}, Beside: true},
		{Model: "join", At: 0, Inputs: map[string]string{"a": "l", "b": "r"}, Outputs: map[string]string{"y": "both"}, Needs: []int{0, 1}},
	}}
	later := time.Now().Add(time.Minute)
	run := &pipelineRun{n: n, p: &repository.Model{Name: "p"}, e: e, send: send,
		steps: []*repository.Model{model("left", "in"), model("right", "in"), model("join", "a", "b")}, deadlines: []time.Time{later, later, later}}
	image, err := tensor.FromFloat32s("image", []int64{1, 1}, []float32{2})
	require.NoError(t, err)
	return run, map[string]tensor.Tensor{"image": image}
}

// sum answers a step with the sum of its inputs' first values, plus add.
func sum(models []*repository.Model, ins []tensor.Tensor, add float32) (*executed, *repository.Model, *gpuletRun, *inferError) {
	var s float32
	for _, in := range ins {
		v, _ := in.Float32s()
		s += v[0]
	}
	y, _ := tensor.FromFloat32s("y", []int64{1, 1}, []float32{s + add})
	return &executed{outs: []tensor.Tensor{y}, batch: 1}, models[0], &gpuletRun{}, nil
}

// A pipeline's steps that read nothing of each other run at once, and a
// step that reads both runs once both are through, on what they wrote, as
// Triton runs an ensemble's branches; written out of order, they ran in the
// written order before, or were refused.
func TestAPipelinesBranchesRunAtOnce(t *testing.T) {
	var (
		mu       sync.Mutex
		inFlight []string
		seen     [][]string // what was in flight as each step was sent
		both     = make(chan struct{})
	)
	send := func(_ context.Context, models []*repository.Model, _ *gpuletRun, ins []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
		name := models[0].Name
		mu.Lock()
		inFlight = append(inFlight, name)
		seen = append(seen, append([]string(nil), inFlight...))
		if len(inFlight) == 2 {
			close(both)
		}
		mu.Unlock()
		if name != "join" {
			select { // each branch waits for the other to be sent
			case <-both:
			case <-time.After(5 * time.Second):
			}
		}
		mu.Lock()
		for i, f := range inFlight {
			if f == name {
				inFlight = append(inFlight[:i], inFlight[i+1:]...)
				break
			}
		}
		mu.Unlock()
		add := map[string]float32{"left": 10, "right": 100, "join": 0}[name]
		return sum(models, ins, add)
	}
	run, pool := branchRun(t, send)
	path, ierr := run.runSteps(context.Background(), 0, 3, pool, nil)
	require.Nil(t, ierr)
	require.Len(t, seen, 3)
	require.ElementsMatch(t, []string{"left", "right"}, seen[1], "the branches in flight at once")
	require.Equal(t, []string{"join"}, seen[2], "the join after both")
	names := []string{path[0].Name, path[1].Name, path[2].Name}
	require.Equal(t, []string{"left", "right", "join"}, names, "the models in step order")
	v, err := pool["both"].Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{2 + 10 + 2 + 100}, v, "the join read both branches")
	require.Contains(t, pool, "l")
	require.Contains(t, pool, "r")
}

// A branch that fails fails the request under its written place, and the
// step that reads it is not sent.
func TestAPipelinesFailingBranchStopsTheJoin(t *testing.T) {
	var (
		mu   sync.Mutex
		sent []string
	)
	send := func(_ context.Context, models []*repository.Model, _ *gpuletRun, ins []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
		mu.Lock()
		sent = append(sent, models[0].Name)
		mu.Unlock()
		if models[0].Name == "right" {
			return nil, models[0], &gpuletRun{}, &inferError{code: http.StatusServiceUnavailable, reason: reasonDeadline, msg: "right: the deadline cannot be met"}
		}
		return sum(models, ins, 0)
	}
	run, pool := branchRun(t, send)
	_, ierr := run.runSteps(context.Background(), 0, 3, pool, nil)
	require.NotNil(t, ierr)
	require.Equal(t, reasonDroppedEarly, ierr.reason)
	require.Contains(t, ierr.msg, "dropped at step[2] (right)", "named where it is written")
	require.NotContains(t, sent, "join")
	require.NotContains(t, pool, "both")

	// A client gone before the steps run: none is sent, and it says so.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sent = nil
	run, pool = branchRun(t, send)
	_, ierr = run.runSteps(ctx, 0, 3, pool, nil)
	require.NotNil(t, ierr)
	require.Equal(t, reasonCancelled, ierr.reason)
	require.Empty(t, sent)
}

// besideFanoutRun is a pipeline request whose steps, thumb and det on the
// request's "image" at once, then cls on each of det's rows (the fan-out),
// go through send.
func besideFanoutRun(t *testing.T, send stepSender) (*pipelineRun, map[string]tensor.Tensor) {
	t.Helper()
	run, _ := fanoutRun(t, 2, 1, send)
	run.p.Outputs = []repository.TensorSpec{{Name: "labels"}, {Name: "small"}}
	run.e = &repository.Ensemble{Fanout: "objects", FanoutStep: 2, FanoutWriter: 1, Steps: []repository.EnsembleStep{
		{Model: "thumb", Inputs: map[string]string{"in": "image"}, Outputs: map[string]string{"small": "small"}},
		{Model: "det", Inputs: map[string]string{"in": "image"}, Outputs: map[string]string{"crops": "objects"}, At: 1, Beside: true},
		{Model: "cls", Inputs: map[string]string{"x": "objects"}, Outputs: map[string]string{"y": "labels"}, At: 2, Needs: []int{1}},
	}}
	in := []repository.TensorSpec{{Name: "in"}}
	run.steps = []*repository.Model{{Name: "thumb", Inputs: in}, {Name: "det", Inputs: in}, run.steps[1]}
	later := time.Now().Add(time.Minute)
	run.deadlines = []time.Time{later, later, later}
	image, err := tensor.FromFloat32s("image", []int64{1, 1}, []float32{3})
	require.NoError(t, err)
	return run, map[string]tensor.Tensor{"image": image}
}

// A pipeline's fan-out starts once the step that writes it is through,
// beside a step before the fan-out that its rows do not wait on, as Triton
// starts each step once what it reads is written: the step beside the
// detector here answers only once the classifier has been sent a row. The
// fan-out waited for every step before it.
func TestAFanOutStartsOnceItsWriterIsThrough(t *testing.T) {
	var (
		rowSent  = make(chan struct{})
		once     sync.Once
		released bool // the step beside was answered after a row was sent
	)
	send := func(_ context.Context, models []*repository.Model, _ *gpuletRun, ins []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
		var out tensor.Tensor
		switch models[0].Name {
		case "thumb":
			select {
			case <-rowSent:
				released = true
			case <-time.After(5 * time.Second):
			}
			out, _ = tensor.FromFloat32s("small", []int64{1, 1}, []float32{7})
		case "det":
			out, _ = tensor.FromFloat32s("crops", []int64{1, 2, 2}, []float32{1, 0, 2, 0})
		default:
			once.Do(func() { close(rowSent) })
			v, _ := ins[0].Float32s()
			out, _ = tensor.FromFloat32s("y", []int64{1, 1}, v[:1])
		}
		return &executed{outs: []tensor.Tensor{out}, batch: 1}, models[0], &gpuletRun{}, nil
	}
	run, pool := besideFanoutRun(t, send)
	fan := &fanRun{}
	path, ierr := run.runSteps(context.Background(), 0, 2, pool, fan)
	require.Nil(t, ierr)
	require.True(t, released, "the fan-out ran beside the step its rows do not wait on")
	require.True(t, fan.ran)
	require.Equal(t, []string{"thumb", "det"}, []string{path[0].Name, path[1].Name})
	require.Len(t, fan.rows["labels"], 2)
	for j, want := range []float32{1, 2} {
		v, err := fan.rows["labels"][j].Float32s()
		require.NoError(t, err)
		require.Equal(t, want, v[0], "row %d", j)
	}
	require.NotContains(t, fan.rows, "small", "written before the fan-out: from pool")
	small, err := pool["small"].Float32s()
	require.NoError(t, err)
	require.Equal(t, []float32{7}, small)
	require.InDelta(t, 1, fan.paths.accuracy(run, path), 1e-12)
}

// A row of a fan-out that runs beside a step before it fails: the step
// beside is cancelled, and the row's error is the answer.
func TestAFailingRowStopsTheStepBesideTheFanOut(t *testing.T) {
	var cancelled bool // the step beside saw its request cancelled
	send := func(ctx context.Context, models []*repository.Model, _ *gpuletRun, _ []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
		switch models[0].Name {
		case "thumb":
			select {
			case <-ctx.Done():
				cancelled = true
				return nil, models[0], &gpuletRun{}, &inferError{code: http.StatusServiceUnavailable, reason: reasonCancelled, msg: "thumb: cancelled"}
			case <-time.After(5 * time.Second):
			}
			out, _ := tensor.FromFloat32s("small", []int64{1, 1}, []float32{7})
			return &executed{outs: []tensor.Tensor{out}, batch: 1}, models[0], &gpuletRun{}, nil
		case "det":
			out, _ := tensor.FromFloat32s("crops", []int64{1, 2, 2}, []float32{1, 0, 2, 0})
			return &executed{outs: []tensor.Tensor{out}, batch: 1}, models[0], &gpuletRun{}, nil
		}
		return nil, models[0], &gpuletRun{}, &inferError{code: http.StatusServiceUnavailable, reason: reasonDeadline, msg: "cls: the deadline cannot be met"}
	}
	run, pool := besideFanoutRun(t, send)
	_, ierr := run.runSteps(context.Background(), 0, 2, pool, &fanRun{})
	require.NotNil(t, ierr)
	require.Contains(t, ierr.msg, "dropped at step[2] (cls)")
	require.True(t, cancelled, "the step beside the fan-out is cancelled with it")
}

// A fan-out's rows may read what was written before the fan-out: the
// classifier reads each object and, whole, what the step beside the
// detector wrote and another output of the detector; the fan-out starts once both are through. It was refused
// when the pipeline was read.
func TestAFanOutsRowsReadWhatWasWrittenBefore(t *testing.T) {
	var (
		mu       sync.Mutex
		thumbEnd time.Time
		rowStart []time.Time
	)
	send := func(_ context.Context, models []*repository.Model, _ *gpuletRun, ins []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
		var out tensor.Tensor
		switch models[0].Name {
		case "thumb":
			time.Sleep(20 * time.Millisecond) // through after the detector
			out, _ = tensor.FromFloat32s("small", []int64{1, 1}, []float32{10})
			mu.Lock()
			thumbEnd = time.Now()
			mu.Unlock()
		case "det":
			out, _ = tensor.FromFloat32s("crops", []int64{1, 2, 2}, []float32{1, 0, 2, 0})
			n, _ := tensor.FromFloat32s("n", []int64{1, 1}, []float32{100})
			return &executed{outs: []tensor.Tensor{out, n}, batch: 1}, models[0], &gpuletRun{}, nil
		default:
			mu.Lock()
			rowStart = append(rowStart, time.Now())
			mu.Unlock()
			x, _ := ins[0].Float32s()
			c, _ := ins[1].Float32s()
			k, _ := ins[2].Float32s()
			out, _ = tensor.FromFloat32s("y", []int64{1, 1}, []float32{x[0] + c[0] + k[0]})
		}
		return &executed{outs: []tensor.Tensor{out}, batch: 1}, models[0], &gpuletRun{}, nil
	}
	run, pool := besideFanoutRun(t, send)
	run.e.Steps[1].Outputs["n"] = "count" // the detector's count, beside its objects
	cls := run.e.Steps[2]
	cls.Inputs = map[string]string{"x": "objects", "ctx": "small", "k": "count"}
	cls.Needs = []int{0, 1}
	run.e.Steps[2] = cls
	run.e.RowReads, run.e.RowNeeds = []string{"count", "small"}, []int{0}
	run.steps[2] = &repository.Model{Name: "cls", Config: repository.ModelConfig{MaxBatchSize: 32},
		Inputs: []repository.TensorSpec{{Name: "x"}, {Name: "ctx"}, {Name: "k"}}}

	fan := &fanRun{}
	_, ierr := run.runSteps(context.Background(), 0, 2, pool, fan)
	require.Nil(t, ierr)
	for j, want := range []float32{111, 112} {
		v, err := fan.rows["labels"][j].Float32s()
		require.NoError(t, err)
		require.Equal(t, want, v[0], "row %d: its object, what thumb wrote and the detector's count", j)
	}
	require.Len(t, rowStart, 2)
	for _, at := range rowStart {
		require.False(t, at.Before(thumbEnd), "a row starts once what it reads is written")
	}
}
