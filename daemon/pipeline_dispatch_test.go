package daemon

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// sent is what a fake gpu-let does with one step request: the model that
// took it (nil: routed nowhere), whether it had a gpu-let, its error.
type sent struct {
	model  string
	gpulet bool
	reason string // "" answers
}

// A step request counts once however it is routed, as the simulator
// counts it: in the rate of the model first chosen, and in the statistics
// of the model whose answer or refusal stands. A rerouted request counted
// twice before: two hits in the planner's rates (the load it planned for
// was inflated by every reroute) and a failure booked against the model
// that refused it although the pipeline answered.
func TestStepRequestCountsOnce(t *testing.T) {
	a := &repository.Model{Name: "a", Family: "a"}
	b := &repository.Model{Name: "b", Family: "a"}
	byName := map[string]*repository.Model{"a": a, "b": b}
	cases := []struct {
		name      string
		sends     []sent
		err       string // the step's error reason, "" answered
		rates     map[string]int64
		successes map[string]int64
		failures  map[string]int64
		rerouted  int64
	}{
		{name: "answered", sends: []sent{{"a", true, ""}}, rates: map[string]int64{"a": 1},
			successes: map[string]int64{"a": 1}},
		{name: "rerouted and answered", sends: []sent{{"a", true, reasonDeadline}, {"b", true, ""}},
			rates: map[string]int64{"a": 1}, successes: map[string]int64{"b": 1}, rerouted: 1},
		{name: "rerouted and refused again", sends: []sent{{"a", true, reasonDropped}, {"b", true, reasonDeadline}},
			err: reasonDeadline, rates: map[string]int64{"a": 1}, failures: map[string]int64{"b": 1}, rerouted: 1},
		{name: "nowhere to reroute", sends: []sent{{"a", true, reasonQueueFull}, {"", false, reasonUnroutable}},
			err: reasonQueueFull, rates: map[string]int64{"a": 1}, failures: map[string]int64{"a": 1}},
		{name: "not rerouted for a bad answer", sends: []sent{{"a", true, reasonExecutorFailed}},
			err: reasonExecutorFailed, rates: map[string]int64{"a": 1}, failures: map[string]int64{"a": 1}},
		{name: "routed nowhere", sends: []sent{{"", false, reasonUnroutable}},
			err: reasonUnroutable, rates: map[string]int64{"a": 1}, failures: map[string]int64{"a": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := &node{log: zap.NewNop(), rates: newRateMeter(0.5, time.Now()), stepRates: newRateMeter(0.5, time.Now()),
				catalog: newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), nil, nil, zap.NewNop())}
			n.metrics = newMetrics(n)
			p := &repository.Model{Name: "p"}
			run := &pipelineRun{n: n, p: p, e: &repository.Ensemble{Steps: []repository.EnsembleStep{{Model: "a"}}, FanoutStep: -1},
				steps: []*repository.Model{a}, deadlines: []time.Time{time.Now().Add(time.Minute)}}
			calls := 0
			run.send = func(_ context.Context, _ []*repository.Model, not *gpuletRun, _ []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
				require.Less(t, calls, len(tc.sends), "sent more than the case expects")
				s := tc.sends[calls]
				calls++
				if calls > 1 {
					require.NotNil(t, not, "a reroute excepts the gpu-let that refused")
				}
				var g *gpuletRun
				if s.gpulet {
					g = &gpuletRun{}
				}
				if s.reason != "" {
					return nil, byName[s.model], g, &inferError{code: http.StatusServiceUnavailable, reason: s.reason, msg: s.reason}
				}
				return &executed{batch: 1}, byName[s.model], g, nil
			}
			_, m, ierr := run.dispatch(context.Background(), 0, nil, nil)
			require.Equal(t, len(tc.sends), calls)
			if tc.err == "" {
				require.Nil(t, ierr)
				require.Equal(t, tc.sends[len(tc.sends)-1].model, m.Name)
			} else {
				require.NotNil(t, ierr)
				require.Equal(t, tc.err, ierr.reason)
			}
			for _, name := range []string{"a", "b"} {
				require.Equal(t, tc.rates[name], n.rates.counted(name), "rate of %s", name)
				require.Equal(t, tc.rates[name], n.stepRates.counted(name), "step rate of %s", name)
				c := n.counters.of(name)
				require.Equal(t, tc.successes[name], c.success.count.Load(), "successes of %s", name)
				require.Equal(t, tc.failures[name], c.fail.count.Load(), "failures of %s", name)
			}
			require.Equal(t, tc.rerouted, n.pipes.snapshot(p.Name).Rerouted)
		})
	}
}

// A traced pipeline request's step requests have traces of their own that
// name it, with the executor's times of the one that ran; an untraced
// pipeline's steps are not traced.
func TestStepRequestsAreTracedUnderTheirPipeline(t *testing.T) {
	dir := t.TempDir()
	a := &repository.Model{Name: "a", Family: "a", Version: 2}
	n := &node{log: zap.NewNop(), rates: newRateMeter(0.5, time.Now()), stepRates: newRateMeter(0.5, time.Now()),
		catalog: newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), nil, nil, zap.NewNop()), traces: newTracer(dir, nil)}
	n.metrics = newMetrics(n)
	_, err := n.traces.update("", map[string][]string{traceLevel: {traceTimestamps}, traceRate: {"1"}, traceFile: {"p.json"}})
	require.NoError(t, err)
	run := func(parent *reqTrace) {
		r := &pipelineRun{n: n, p: &repository.Model{Name: "p"}, e: &repository.Ensemble{Steps: []repository.EnsembleStep{{Model: "a"}}, FanoutStep: -1},
			steps: []*repository.Model{a}, deadlines: []time.Time{time.Now().Add(time.Minute)}, trace: parent}
		r.send = func(ctx context.Context, _ []*repository.Model, _ *gpuletRun, _ []tensor.Tensor, _ []string, _ time.Time) (*executed, *repository.Model, *gpuletRun, *inferError) {
			traceOf(ctx).executorTimes(time.Now(), 400*time.Microsecond, 200*time.Microsecond, execReport{queue: 50 * time.Microsecond, compute: 100 * time.Microsecond})
			return &executed{batch: 1}, a, &gpuletRun{}, nil
		}
		_, _, ierr := r.dispatch(context.Background(), 0, nil, nil)
		require.Nil(t, ierr)
	}
	run(nil)
	parent := n.traces.sample("p", "p", 1, time.Now(), nil)
	require.NotNil(t, parent)
	run(parent)
	n.traces.done(parent, time.Now(), "")
	n.traces.close()
	traces := readTraces(t, n.traces, filepath.Join(dir, "p.json"))
	require.Len(t, traces, 2, "the step's trace and the pipeline's; the untraced pipeline's step has none")
	step, pipe := traces[0], traces[1]
	require.Equal(t, "p", pipe.Model)
	require.Zero(t, pipe.ParentID)
	require.Equal(t, pipe.ID, step.ParentID)
	require.Equal(t, "a", step.Model)
	require.Equal(t, 2, step.Version)
	require.Len(t, step.Timestamps, 7, "the executor's times of the step")
}
