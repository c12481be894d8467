package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/internal/monoclock"
	"github.com/gpulet/gpuletd/mps"
)

// TestRouterTakesPublishedState: an executor's published state (its queue,
// the other models' work ahead, the policy's dispatch length) reaches the
// route, kept gpu-lets keep their state and credit across a new table, and
// the plan's weights split the requests.
func TestRouterTakesPublishedState(t *testing.T) {
	lat, err := sched.LinearLatency(time.Millisecond, 5*time.Millisecond, 8)
	require.NoError(t, err)
	r := newRouter()
	a, b := &gpuletRun{id: "a"}, &gpuletRun{id: "b"}
	r.install(map[string][]routeEntry{"m": {{g: a, weight: 3, lat: lat}, {g: b, weight: 1, lat: lat}}})

	now := time.Now()
	r.update(a, &pb.ExecutorState{AtMonoNs: monoclock.Of(now), FreeAtMonoNs: monoclock.Of(now.Add(2 * time.Millisecond)),
		Models: []*pb.ModelState{{Name: "m", Queued: 2, Batch: 2, ExecMonoNs: monoclock.Of(now.Add(time.Second)),
			LatestMonoNs: monoclock.Of(now.Add(time.Second)), DeadlineMonoNs: monoclock.Of(now.Add(2 * time.Second)),
			AheadNs: int64(3 * time.Millisecond), DispatchAt: 5, IdleRule: true}}})
	mr := (*r.table.Load())["m"]
	st := mr.targets[0].RouteState
	require.Equal(t, 2, st.Queued)
	require.Equal(t, 3*time.Millisecond, st.Ahead)
	require.Equal(t, 5, st.DispatchAt)
	require.True(t, st.IdleRule)
	require.Equal(t, r.at(now.Add(2*time.Millisecond)), st.FreeAt)

	// Both report idle before each request: the plan's weights decide.
	sent := map[string]int{}
	for range 400 {
		at := monoclock.Of(time.Now())
		for _, g := range []*gpuletRun{a, b} {
			r.update(g, &pb.ExecutorState{AtMonoNs: at, FreeAtMonoNs: at, Models: []*pb.ModelState{{Name: "m"}}})
		}
		_, g, _, err := r.routeAny([]string{"m"}, r.now()+time.Second, r.now()+time.Second, nil)
		require.NoError(t, err)
		sent[g.id]++
	}
	require.InDelta(t, 300, sent["a"], 8, "the plan's 3:1 split")
	require.InDelta(t, 100, sent["b"], 8)

	credit := mr.targets[0].Credit
	r.install(map[string][]routeEntry{"m": {{g: a, weight: 3, lat: lat}}})
	kept := (*r.table.Load())["m"].targets[0]
	require.Equal(t, credit, kept.Credit, "a kept gpu-let keeps its credit")
	require.Equal(t, uint64(sent["a"]), kept.Sent)

	_, _, _, err = r.routeAny([]string{"absent"}, r.now(), r.now(), nil)
	require.ErrorIs(t, err, ErrNoGpulet)
}

// TestQueuedLeavesOutBatchesDueToHaveStarted: Triton's pending count reads
// the requests that wait, not those of a batch whose time has come since
// its executor last reported (that report comes with the batch's end).
func TestQueuedLeavesOutBatchesDueToHaveStarted(t *testing.T) {
	lat, err := sched.LinearLatency(time.Millisecond, 5*time.Millisecond, 8)
	require.NoError(t, err)
	r := newRouter()
	a := &gpuletRun{id: "a"}
	r.install(map[string][]routeEntry{"m": {{g: a, weight: 1, lat: lat}}})
	state := func(reported, exec time.Time) *pb.ExecutorState {
		at := monoclock.Of(reported)
		return &pb.ExecutorState{AtMonoNs: at, FreeAtMonoNs: at, Models: []*pb.ModelState{{Name: "m", Queued: 3, Batch: 3,
			ExecMonoNs: monoclock.Of(exec), LatestMonoNs: monoclock.Of(exec), DeadlineMonoNs: monoclock.Of(exec.Add(time.Second))}}}
	}
	now := time.Now()
	r.update(a, state(now, now.Add(time.Hour)))
	require.Equal(t, 3, r.queued("m"), "a batch that waits for more")
	r.update(a, state(now.Add(-2*time.Millisecond), now.Add(-time.Millisecond)))
	require.Equal(t, 0, r.queued("m"), "a batch due to have started on an idle gpu-let runs")
	require.Equal(t, 0, r.queued("absent"))
}

// TestRouterTakesCalibration: the route predicts with ℓ(b) scaled by the
// calibration factor the executor reports, as the executor's scheduler
// plans, and keeps it across a new table; an executor reporting none (0)
// or a factor below 1 leaves the planned ℓ(b).
func TestRouterTakesCalibration(t *testing.T) {
	lat, err := sched.LinearLatency(time.Millisecond, 5*time.Millisecond, 8)
	require.NoError(t, err)
	r := newRouter()
	a := &gpuletRun{id: "a"}
	r.install(map[string][]routeEntry{"m": {{g: a, weight: 1, lat: lat}}})
	at := monoclock.Of(time.Now())
	state := func(f float64) *pb.ExecutorState {
		return &pb.ExecutorState{AtMonoNs: at, FreeAtMonoNs: at, Models: []*pb.ModelState{{Name: "m", LatencyFactor: f}}}
	}
	l1 := func() time.Duration { return (*r.table.Load())["m"].targets[0].Latency.At(1) }
	require.Equal(t, 6*time.Millisecond, l1())
	for _, tc := range []struct {
		factor float64
		want   time.Duration
	}{
		{0, 6 * time.Millisecond},
		{1.5, 9 * time.Millisecond},
		{1.5, 9 * time.Millisecond},
		{0.5, 6 * time.Millisecond},
		{2, 12 * time.Millisecond},
	} {
		r.update(a, state(tc.factor))
		require.Equal(t, tc.want, l1(), "factor %g", tc.factor)
	}
	r.install(map[string][]routeEntry{"m": {{g: a, weight: 1, lat: lat}}})
	require.Equal(t, 12*time.Millisecond, l1(), "a kept gpu-let keeps its calibration")
	r.update(a, state(1))
	require.Equal(t, 6*time.Millisecond, l1())
}

// TestRouteAnyAcrossModels: one route over two models' gpu-lets gives each
// model its plan weight's share (a pipeline step's variants); a reroute
// leaves out the gpu-let that refused and goes only where the request can
// still finish.
func TestRouteAnyAcrossModels(t *testing.T) {
	lat, err := sched.LinearLatency(time.Millisecond, 5*time.Millisecond, 8)
	require.NoError(t, err)
	r := newRouter()
	a, b, c := &gpuletRun{id: "a"}, &gpuletRun{id: "b"}, &gpuletRun{id: "c"}
	r.install(map[string][]routeEntry{
		"cls":      {{g: a, weight: 2, lat: lat}, {g: b, weight: 1, lat: lat}},
		"cls-lite": {{g: c, weight: 1, lat: lat}},
		"other":    {{g: c, weight: 5, lat: lat}},
	})
	idle := func() {
		at := monoclock.Of(time.Now())
		for _, g := range []*gpuletRun{a, b, c} {
			r.update(g, &pb.ExecutorState{AtMonoNs: at, FreeAtMonoNs: at, Models: []*pb.ModelState{{Name: "cls"}, {Name: "cls-lite"}, {Name: "other"}}})
		}
	}
	sent := map[string]int{}
	for range 400 {
		idle()
		model, g, _, err := r.routeAny([]string{"cls-lite", "cls"}, r.now()+time.Second, r.now()+time.Second, nil)
		require.NoError(t, err)
		sent[model+"@"+g.id]++
	}
	require.InDelta(t, 200, sent["cls@a"], 8, "the plan's 2:1:1 split over both models")
	require.InDelta(t, 100, sent["cls@b"], 8)
	require.InDelta(t, 100, sent["cls-lite@c"], 8)
	require.Len(t, sent, 3, "only the models asked for")

	for range 20 {
		idle()
		model, g, _, err := r.routeAny([]string{"cls", "cls-lite"}, r.now()+time.Second, r.now()+time.Second, a)
		require.NoError(t, err)
		require.NotEqual(t, "a", g.id, "a reroute leaves out the gpu-let that refused")
		require.Contains(t, []string{"cls", "cls-lite"}, model)
	}

	// b and c are busy for longer than the request has: a reroute finds no
	// gpu-let that can finish it, a new request still gets one.
	at := time.Now()
	for _, g := range []*gpuletRun{b, c} {
		r.update(g, &pb.ExecutorState{AtMonoNs: monoclock.Of(at), FreeAtMonoNs: monoclock.Of(at.Add(time.Second)),
			Models: []*pb.ModelState{{Name: "cls"}, {Name: "cls-lite"}}})
	}
	_, _, _, err = r.routeAny([]string{"cls", "cls-lite"}, r.now()+10*time.Millisecond, r.now()+10*time.Millisecond, a)
	require.ErrorIs(t, err, errCannotFinish)
	require.ErrorIs(t, err, ErrNoGpulet)
	_, _, _, err = r.routeAny([]string{"cls-lite"}, r.now()+10*time.Millisecond, r.now()+10*time.Millisecond, c)
	require.ErrorIs(t, err, ErrNoGpulet, "nothing left once the refusing gpu-let is out")
}

// TestRouteLatencyPadsOnGPUs: on an NVIDIA GPU the executor runs a batch
// padded to a fixed size, and the router predicts it at that size's ℓ.
func TestRouteLatencyPadsOnGPUs(t *testing.T) {
	req := &pb.LoadModelRequest{Name: "m", MaxBatchSize: 8, Latency: []*pb.LatencyPoint{{Batch: 1, Ms: 1}, {Batch: 8, Ms: 8}}}
	var n node
	for _, tc := range []struct {
		kind   mps.Kind
		padded bool
	}{{mps.KindNVIDIA, true}, {mps.KindCPU, false}, {mps.KindEmulated, false}} {
		g := &gpuletRun{id: string(tc.kind), device: mps.Device{Kind: tc.kind}, models: map[string]*pb.LoadModelRequest{"m": req}}
		lat, _, err := n.routeLatency(g, "m")
		require.NoError(t, err)
		if tc.padded {
			require.Equal(t, lat.At(4), lat.At(3), tc.kind)
			require.Equal(t, lat.At(8), lat.At(5), tc.kind)
		} else {
			require.Less(t, lat.At(3), lat.At(4), tc.kind)
		}
	}
	_, _, err := n.routeLatency(&gpuletRun{id: "x"}, "m")
	require.Error(t, err, "a model not loaded there")

	// The executor's overhead at each batch size, as it schedules with it.
	g := &gpuletRun{id: "cpu", device: mps.Device{Kind: mps.KindCPU}, models: map[string]*pb.LoadModelRequest{"m": req},
		loaded: map[string]*pb.LoadModelResponse{"m": {DispatchOverhead: []*pb.LatencyPoint{{Batch: 1, Ms: 0.1}, {Batch: 8, Ms: 0.8}}}}}
	lat, one, err := n.routeLatency(g, "m")
	require.NoError(t, err)
	require.Equal(t, 100*time.Microsecond, one)
	require.Equal(t, 1100*time.Microsecond, lat.At(1))
	require.Equal(t, 4400*time.Microsecond, lat.At(4))
	require.Equal(t, 8800*time.Microsecond, lat.At(8))

	// A batch cap bounds the batches the router predicts as it bounds the
	// executor's (and the simulator's).
	capped := &pb.LoadModelRequest{Name: "m", MaxBatchSize: 8, BatchCap: 3, Latency: req.Latency}
	g.models["m"] = capped
	lat, _, err = n.routeLatency(g, "m")
	require.NoError(t, err)
	require.Equal(t, 3, lat.MaxBatch())
}

// TestWarmupBatches: an executor on an NVIDIA GPU warms every padded batch
// size (each its own session), whatever the batch cap; elsewhere 1, the
// plan's batch and the largest.
func TestWarmupBatches(t *testing.T) {
	gpu, cpu := mps.Device{Kind: mps.KindNVIDIA}, mps.Device{Kind: mps.KindCPU}
	for _, tc := range []struct {
		name       string
		dev        mps.Device
		plan, maxB int
		want       []int32
	}{
		{"cpu", cpu, 6, 32, []int32{1, 6, 32}},
		{"cpu, plan batch beyond the largest", cpu, 64, 32, []int32{1, 32}},
		{"gpu", gpu, 6, 32, []int32{1, 2, 4, 8, 16, 32}},
		{"gpu, largest 6", gpu, 3, 6, []int32{1, 2, 4, 6}},
		{"gpu, batch of one", gpu, 1, 1, []int32{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, warmupBatches(tc.dev, tc.plan, tc.maxB))
		})
	}
}
