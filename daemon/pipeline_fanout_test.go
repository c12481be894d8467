package daemon

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// fanoutRun is a pipeline request at its fan-out: a [1, rows, 2] tensor
// whose rows go, one request each, to a step model "cls" that batches 32
// rows, served by gpulets gpu-lets, through send.
func fanoutRun(t testing.TB, rows, gpulets int, send stepSender) (*pipelineRun, map[string]tensor.Tensor) {
	t.Helper()
	n := &node{log: zap.NewNop(), router: newRouter(), rates: newRateMeter(0.5, time.Now()), stepRates: newRateMeter(0.5, time.Now()),
		catalog: newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), nil, nil, zap.NewNop())}
	n.metrics = newMetrics(n)
	cls := &repository.Model{Name: "cls", Family: "cls", Config: repository.ModelConfig{MaxBatchSize: 32},
		Inputs: []repository.TensorSpec{{Name: "x"}}}
	lat, err := sched.LinearLatency(time.Millisecond, 100*time.Microsecond, 32)
	require.NoError(t, err)
	var entries []routeEntry
	for range gpulets {
		entries = append(entries, routeEntry{g: &gpuletRun{}, weight: 1, lat: lat})
	}
	n.router.install(map[string][]routeEntry{"cls": entries})
	p := &repository.Model{Name: "p", Config: repository.ModelConfig{MaxBatchSize: 1}, Outputs: []repository.TensorSpec{{Name: "labels"}}}
	e := &repository.Ensemble{Fanout: "objects", FanoutStep: 1, Steps: []repository.EnsembleStep{
		{Model: "det"},
		{Model: "cls", Inputs: map[string]string{"x": "objects"}, Outputs: map[string]string{"y": "labels"}, At: 1, Needs: []int{0}},
	}}
	vals := make([]float32, 2*rows)
	for i := range rows {
		vals[2*i] = float32(i)
	}
	objects, err := tensor.FromFloat32s("objects", []int64{1, int64(rows), 2}, vals)
	require.NoError(t, err)
	run := &pipelineRun{n: n, p: p, e: e, steps: []*repository.Model{{Name: "det"}, cls},
		deadlines: []time.Time{time.Now().Add(time.Minute), time.Now().Add(time.Minute)}, send: send}
	return run, map[string]tensor.Tensor{"objects": objects}
}

// fanOut runs the fan-out on pool's fan-out tensor (fanRows) and returns
// its rows' tensors and the request's accuracy after before, the models
// that ran the steps before the fan-out, as a pipeline request does.
func (r *pipelineRun) fanOut(ctx context.Context, pool map[string]tensor.Tensor, before []*repository.Model) (fanoutRows, float64, *inferError) {
	rows, paths, ierr := r.fanRows(ctx, pool[r.e.Fanout], rowInputs(r.e, pool))
	if ierr != nil {
		return nil, 0, ierr
	}
	return rows, paths.accuracy(r, before), nil
}

// A fan-out of many rows keeps a bounded number of them in flight (twice a
// batch of every gpu-let of the step's model, at least 64), each row's
// answer in its place; with a few rows all go at once. It sent every row at
// once before: a detector's 20 000 objects were 20 000 requests and
// goroutines in flight, a gigabyte of the daemon's memory for a request of
// a few megabytes.
func TestAFanOutKeepsBoundedRowsInFlight(t *testing.T) {
	for _, tc := range []struct {
		name          string
		rows, gpulets int
		most          int
	}{
		{"many rows, one gpu-let", 5000, 1, 64},
		{"many rows, three gpu-lets", 5000, 3, 192},
		{"a few rows", 10, 1, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu             sync.Mutex
				inFlight, peak int
				gate           = make(chan struct{}) // closed once tc.most are in flight at once
				opened         bool
			)
			send := func(_ context.Context, models []*repository.Model, _ *gpuletRun, ins []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
				mu.Lock()
				inFlight++
				peak = max(peak, inFlight)
				if inFlight == tc.most && peak == tc.most && !opened {
					opened = true
					close(gate)
				}
				mu.Unlock()
				select { // the first rows wait for the others, so that all may be seen at once
				case <-gate:
				case <-time.After(5 * time.Second):
				}
				time.Sleep(100 * time.Microsecond)
				mu.Lock()
				inFlight--
				mu.Unlock()
				v, _ := ins[0].Float32s()
				y, _ := tensor.FromFloat32s("y", []int64{1, 1}, v[:1])
				return &executed{outs: []tensor.Tensor{y}, batch: 1}, models[0], &gpuletRun{}, nil
			}
			run, pool := fanoutRun(t, tc.rows, tc.gpulets, send)
			out, acc, ierr := run.fanOut(context.Background(), pool, nil)
			require.Nil(t, ierr)
			require.Len(t, out["labels"], tc.rows)
			require.Len(t, out, 1, "the rows keep the pipeline's outputs alone")
			require.InDelta(t, 1, acc, 1e-12, "every row ran the step's own model")
			for j, row := range out["labels"] {
				v, err := row.Float32s()
				require.NoError(t, err)
				require.Equal(t, []float32{float32(j)}, v, "row %d answered in its place", j)
			}
			require.Equal(t, tc.most, peak, "as many rows in flight at once, and no more")
		})
	}
}

// A row that fails fails the fan-out, and the rows not yet sent are not
// sent; a client that goes away stops the rows too.
func TestAFanOutStopsAtItsFirstFailure(t *testing.T) {
	var (
		mu   sync.Mutex
		sent int
	)
	send := func(_ context.Context, models []*repository.Model, _ *gpuletRun, ins []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
		mu.Lock()
		sent++
		mu.Unlock()
		v, _ := ins[0].Float32s()
		if v[0] == 100 {
			return nil, models[0], &gpuletRun{}, &inferError{code: http.StatusServiceUnavailable, reason: reasonDeadline, msg: "cls: the deadline cannot be met"}
		}
		time.Sleep(100 * time.Microsecond)
		y, _ := tensor.FromFloat32s("y", []int64{1, 1}, v[:1])
		return &executed{outs: []tensor.Tensor{y}, batch: 1}, models[0], &gpuletRun{}, nil
	}
	run, pool := fanoutRun(t, 5000, 1, send)
	_, _, ierr := run.fanOut(context.Background(), pool, nil)
	require.NotNil(t, ierr)
	require.Equal(t, reasonDroppedEarly, ierr.reason)
	require.Contains(t, ierr.msg, "dropped at step[1] (cls)")
	require.Less(t, sent, 1000, "the rows after the failure were not sent")

	ctx, cancel := context.WithCancel(context.Background())
	sent = 0
	run, pool = fanoutRun(t, 5000, 1, func(c context.Context, models []*repository.Model, g *gpuletRun, ins []tensor.Tensor, names []string, d time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
		mu.Lock()
		if sent++; sent == 200 {
			cancel()
		}
		mu.Unlock()
		v, _ := ins[0].Float32s()
		y, _ := tensor.FromFloat32s("y", []int64{1, 1}, v[:1])
		return &executed{outs: []tensor.Tensor{y}, batch: 1}, models[0], &gpuletRun{}, nil
	})
	_, _, ierr = run.fanOut(ctx, pool, nil)
	require.NotNil(t, ierr, "a fan-out whose client went away is not answered")
	require.Equal(t, reasonCancelled, ierr.reason)
	require.Less(t, sent, 1000)
}

// A pipeline's dynamic inputs are sent at the profile_shapes of the first
// step that reads them (gpuletd load and infer read them from its
// configuration), with the batch dimension the step has and the pipeline
// lacks; an input no step profiles, or a tensor a step wrote, has none.
func TestPipelineShapesComeFromItsSteps(t *testing.T) {
	det := &repository.Model{Name: "det", Config: repository.ModelConfig{MaxBatchSize: 8, ProfileShapes: map[string][]int64{"image": {64}, "mask": {8}}}}
	cls := &repository.Model{Name: "cls", Config: repository.ModelConfig{MaxBatchSize: 32, ProfileShapes: map[string][]int64{"x": {16}, "ctx": {3}}}}
	e := &repository.Ensemble{Steps: []repository.EnsembleStep{
		{Model: "det", Inputs: map[string]string{"image": "image", "mask": "objects"}},
		{Model: "cls", Inputs: map[string]string{"x": "objects", "ctx": "context"}},
	}}
	p := &repository.Model{Name: "p", Inputs: []repository.TensorSpec{{Name: "image"}, {Name: "context"}, {Name: "plain"}},
		Config: repository.ModelConfig{MaxBatchSize: 1, Ensemble: e}}
	steps := []*repository.Model{det, cls}
	require.Equal(t, map[string][]int64{"image": {64}, "context": {3}}, pipelineShapes(p, steps))
	p.Config.MaxBatchSize = 0 // the pipeline's inputs carry the steps' batch dimension
	require.Equal(t, map[string][]int64{"image": {1, 64}, "context": {1, 3}}, pipelineShapes(p, steps))
	det.Config.ProfileShapes, cls.Config.ProfileShapes = nil, nil
	require.Nil(t, pipelineShapes(p, steps))
}

// BenchmarkFanOutRows runs a fan-out of 200 000 rows through a step that
// answers at once and reports the bytes each row keeps until the pipeline
// is answered (kept-B/row) beside Go's allocations: its outputs' tensors,
// not the models it ran (its accuracy is counted as it is through).
func BenchmarkFanOutRows(b *testing.B) {
	const rows = 200000
	send := func(_ context.Context, models []*repository.Model, _ *gpuletRun, _ []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
		y, _ := tensor.Zeros("y", tensor.FP32, []int64{1, 10})
		return &executed{outs: []tensor.Tensor{y}, batch: 1}, models[0], &gpuletRun{}, nil
	}
	b.ReportAllocs()
	var kept uint64
	for range b.N {
		run, pool := fanoutRun(b, rows, 1, send)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out, _, ierr := run.fanOut(context.Background(), pool, nil)
		if ierr != nil {
			b.Fatal(ierr.msg)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept += after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
		runtime.KeepAlive(out)
	}
	b.ReportMetric(float64(kept)/float64(b.N)/rows, "kept-B/row")
}

// A request's accuracy is the mean of its rows' paths', each counted as
// its row is through: half the rows run a variant of accuracy 0.5 here.
// The rows kept the models they ran until the answer before, about 40
// bytes a row.
func TestAFanOutsAccuracyIsItsRowsMean(t *testing.T) {
	lite := &repository.Model{Name: "cls-lite", Family: "cls-lite", Config: repository.ModelConfig{Accuracy: 0.5}}
	send := func(_ context.Context, models []*repository.Model, _ *gpuletRun, ins []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
		v, _ := ins[0].Float32s()
		y, _ := tensor.FromFloat32s("y", []int64{1, 1}, v[:1])
		m := models[0]
		if int(v[0])%2 == 1 {
			m = lite
		}
		return &executed{outs: []tensor.Tensor{y}, batch: 1}, m, &gpuletRun{}, nil
	}
	run, pool := fanoutRun(t, 100, 1, send)
	_, acc, ierr := run.fanOut(context.Background(), pool, []*repository.Model{run.steps[0]})
	require.Nil(t, ierr)
	require.InDelta(t, 0.75, acc, 1e-12)

	run, pool = fanoutRun(t, 0, 1, send)
	_, acc, ierr = run.fanOut(context.Background(), pool, []*repository.Model{lite})
	require.Nil(t, ierr)
	require.InDelta(t, 0.5, acc, 1e-12, "no rows: the path to the fan-out's")
}
