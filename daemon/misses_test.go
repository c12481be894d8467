package daemon

import (
	"cmp"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/daemon/repository"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/mps"
)

// The miss rule counts what the daemon answered and, of it, what missed for
// want of room: late answers, deadlines, head drops and full queues. A
// client's fault, a refusal over an overloaded node's share, an executor
// down or a model no gpu-let serves are not counted at all.
func TestMissRuleCountsTheDaemonsOutcomes(t *testing.T) {
	n, m, _ := mlpOnTheCPU(t)
	n.metrics = newMetrics(n)
	slo := m.Config.SLO.D()
	arrived := func(took time.Duration) time.Time { return time.Now().Add(-took) }
	n.record(m, slo/2, false, 1, nil)
	n.record(m, 2*slo, true, 1, nil)
	for _, reason := range []string{reasonDeadline, reasonDropped, reasonQueueFull} {
		n.finish(m, arrived(time.Millisecond), 0, &inferError{code: http.StatusServiceUnavailable, reason: reason})
	}
	n.finish(m, arrived(time.Millisecond), 0, &inferError{code: http.StatusInternalServerError, reason: "engine"})
	for _, reason := range []string{reasonOverShare, reasonExecutorDown, reasonExecutorFailed, reasonUnroutable} {
		n.finish(m, arrived(time.Millisecond), 0, &inferError{code: http.StatusServiceUnavailable, reason: reason})
	}
	n.finish(m, arrived(time.Millisecond), 0, &inferError{code: http.StatusBadRequest, reason: "bad_input"})
	require.Equal(t, map[string]control.Tally{m.Name: {Answered: 6, Missed: 4}}, n.tallies())
}

// Every plan the daemon makes (a re-plan, a preview) gives a model the room
// the miss rule has asked for it.
func TestMissRuleRoomIsPlanned(t *testing.T) {
	ctx := context.Background()
	n, m, _ := mlpOnTheCPU(t)
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "cpu", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{{Name: m.Name, Batch: 1, Rate: 12}}}}}}}
	check := func(answered, missed uint64) string {
		return n.misses.m.Check(control.MissInput{Now: time.Hour, Plan: plan, Settled: true,
			Tallies:   map[string]control.Tally{m.Name: {Answered: answered, Missed: missed}},
			Estimates: map[string]float64{m.Name: 10}, Headroom: control.Headroom})
	}
	check(0, 0)
	require.NotEmpty(t, check(100, 30))
	in, missing := n.planInput(ctx, map[string]float64{m.Name: 10})
	require.Empty(t, missing)
	p, err := n.plan(ctx, in, n.algorithm())
	require.NoError(t, err)
	require.InDelta(t, 10*(1+control.Headroom+control.MissStep), p.Assigned()[m.Name], 1e-9)
}

// The surge check applies the miss rule when no surge re-plans: a model
// that misses on a plan that runs whole is re-planned for the estimates,
// counted from the first check after the plan settled but not re-planned
// within MinReplanGap of the last re-plan, never on a node serving
// pipelines (they re-plan every period), and not while the plan in force
// assigns the model more than the re-plan would plan for it (a spread
// plan's gpu-let of its own).
func TestSurgeCheckReplansOnMisses(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for _, tc := range []struct {
		name      string
		sinceLast time.Duration // from the last re-plan to the second check
		pipeline  bool
		assigned  float64 // a's rate in the plan in force; 120 when 0
		want      string
	}{
		{name: "misses on the plan in force", sinceLast: control.MinReplanGap,
			want: "a missed its SLO 30 times in 100 (30.0%) on the plan in force; planned with 25% more headroom"},
		{name: "too soon after a re-plan", sinceLast: control.MinReplanGap - time.Second},
		{name: "a pipeline is served", sinceLast: control.MinReplanGap, pipeline: true},
		{name: "the plan in force assigns it more than a re-plan would", sinceLast: control.MinReplanGap, assigned: 3138},
	} {
		t.Run(tc.name, func(t *testing.T) {
			let := gpulet.GPULet{Size: 100, Models: []gpulet.Placement{{Name: "a", Batch: 8, Rate: cmp.Or(tc.assigned, 120)}}}
			plan := &gpulet.Plan{Algo: gpulet.AlgoGpuletInt, GPUs: []gpulet.GPUPlan{{ID: "emu0", GPULets: []gpulet.GPULet{let}}}}
			n := meteredNode(t0, plan)
			n.sup.running["x1"] = &gpuletRun{device: mps.Device{ID: "emu0"}, planned: let,
				models: map[string]*pb.LoadModelRequest{"a": {Name: "a"}}}
			if tc.pipeline {
				n.catalog.pipelines = map[string]*repository.Model{"p": {Name: "p"}}
			}
			for i := range 100 { // 100 req/s, below a's 120: no surge
				n.rates.hit("a", at(time.Duration(i)*10*time.Millisecond))
			}
			start, last := at(-time.Minute), at(2*time.Second-tc.sinceLast)
			reason, _ := n.surgeCheck(at(time.Second), start, last)
			require.Empty(t, reason, "counting starts, within MinReplanGap of the last re-plan")
			for i := range 100 {
				n.rates.hit("a", at(time.Second+time.Duration(i)*10*time.Millisecond))
				n.counters.of("a").miss.add(i%10 < 3)
			}
			reason, rates := n.surgeCheck(at(2*time.Second), start, last)
			require.Equal(t, tc.want, reason)
			if tc.want != "" {
				require.InEpsilon(t, 100, rates["a"], 0.01, "the estimate")
			}
		})
	}
}

// A request whose own timeout set its deadline before its model's SLO
// fails as the client asked, not for want of the plan's room.
func TestMissRuleLeavesOutAClientsShorterTimeout(t *testing.T) {
	n, m, _ := mlpOnTheCPU(t)
	n.router = newRouter()
	input := tensor.Tensor{Name: "input", DataType: "FP32", Shape: []int64{784}, Data: make([]byte, 4*784)}
	for _, tc := range []struct {
		timeout time.Duration
		client  bool
	}{
		{0, false},
		{time.Millisecond, true},
		{m.Config.SLO.D(), false},
	} {
		_, ierr := n.execute(context.Background(), m, &kserve.Request{Inputs: []tensor.Tensor{input}, Timeout: tc.timeout}, time.Now())
		require.NotNil(t, ierr, "no gpu-let serves it")
		require.Equal(t, tc.client, ierr.ownLimit, "timeout %v", tc.timeout)
		counted, _ := (&inferError{reason: reasonDeadline, ownLimit: tc.client}).missCounts()
		require.Equal(t, !tc.client, counted)
	}
}
