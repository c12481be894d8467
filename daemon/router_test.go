package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
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
	r.update(a, &pb.ExecutorState{AtUnixNs: now.UnixNano(), FreeAtUnixNs: now.Add(2 * time.Millisecond).UnixNano(),
		Models: []*pb.ModelState{{Name: "m", Queued: 2, Batch: 2, ExecUnixNs: now.Add(time.Second).UnixNano(),
			LatestUnixNs: now.Add(time.Second).UnixNano(), DeadlineUnixNs: now.Add(2 * time.Second).UnixNano(),
			AheadNs: int64(3 * time.Millisecond), DispatchAt: 5, IdleRule: true}}})
	mr := (*r.table.Load())["m"]
	st := mr.targets[0].RouteState
	require.Equal(t, 2, st.Queued)
	require.Equal(t, 3*time.Millisecond, st.Ahead)
	require.Equal(t, 5, st.DispatchAt)
	require.True(t, st.IdleRule)
	require.Equal(t, r.fromWall(now.Add(2*time.Millisecond).UnixNano()), st.FreeAt)

	// Both report idle before each request: the plan's weights decide.
	sent := map[string]int{}
	for range 400 {
		at := time.Now().UnixNano()
		for _, g := range []*gpuletRun{a, b} {
			r.update(g, &pb.ExecutorState{AtUnixNs: at, FreeAtUnixNs: at, Models: []*pb.ModelState{{Name: "m"}}})
		}
		g, _, err := r.route("m", r.now()+time.Second)
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

	_, _, err = r.route("absent", r.now())
	require.ErrorIs(t, err, ErrNoGpulet)
}
