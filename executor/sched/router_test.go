package sched

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// three is three gpu-lets serving model 0 with ℓ(b) = b + 5 ms.
func three(t *testing.T, p Policy) []ExecutorSpec {
	l := linear(t, 1, 5, 16)
	var specs []ExecutorSpec
	for range 3 {
		specs = append(specs, ExecutorSpec{Config: Config{Policy: p}, Models: []ModelSpec{{ID: 0, ModelConfig: ModelConfig{Latency: l}}}})
	}
	return specs
}

// TestRouterStaggers is Symphony §3.3 / Figure 4 with one queue per gpu-let
// and the router in front: 3 gpu-lets, ℓ(b) = b + 5, SLO 12, Ri at
// 0.75·(i−1). R1 goes to gpu-let 0 (all idle: lowest index); R2..R4 join its
// forming batch (2.25 + ℓ(4) = 11.25 ≤ 12), whose frontrun 12 − ℓ(5) = 2 has
// passed when R4 arrives: R1..R4 start at 2.25 and run to 11.25. R5 finds no
// forming batch and goes to the gpu-let that frees first (1, idle); R5..R8
// start there at 5.25; R9..R12 on gpu-let 2 at 8.25. R13 (9.0) goes to the
// gpu-let that frees first, 0 at 11.25, where R13..R16 start at 11.25 as R16
// arrives. So every batch has 4 requests and the gpu-lets take turns every
// 3 time units: staggered execution, as one shared queue would do.
func TestRouterStaggers(t *testing.T) {
	reqs := periodic(0, 60, 0, ms(0.75), ms(12))
	rec := newRecorder()
	sim, err := NewSim(three(t, Deferred{}), rec)
	require.NoError(t, err)
	st, err := sim.Run(NewSliceSource(reqs))
	require.NoError(t, err)
	require.Zero(t, st.Rejections())
	// Each gpu-let ran 5 batches of ℓ(4) = 9: busy all the time from its
	// first start (2.25, 5.25, 8.25) to the end at 2.25 + 14·3 + 9 = 53.25.
	require.Equal(t, ms(53.25), st.End)
	for i := range 3 {
		require.Equal(t, ms(45), sim.BusyTime(i))
	}
	require.Len(t, rec.dispatches, 15)
	for k, d := range rec.dispatches {
		require.Equal(t, k%3, d.Exec, "batch %d", k)
		require.Equal(t, ms(2.25)+time.Duration(k)*ms(3), d.At, "batch %d", k)
		first := uint64(4*k + 1)
		require.Equal(t, []uint64{first, first + 1, first + 2, first + 3}, d.IDs, "batch %d", k)
	}
}

// TestRouterRecoversFromMissingRequests is Figure 5 of Symphony: R13..R15
// never arrive. R16 (11.25) goes to gpu-let 0, which frees then; deferred
// waits for its frontrun and R16..R19 start at 13.5. Then gpu-let 1 (free at
// 14.25) takes R20..R23 at 16.5, gpu-let 2 (free at 17.25) R24..R27 at 19.5,
// gpu-let 0 again R28..R31 at 22.5: batches of 4 throughout, the stagger
// shifted by the gap, and nothing is dropped.
func TestRouterRecoversFromMissingRequests(t *testing.T) {
	reqs := periodic(0, 63, 0, ms(0.75), ms(12), 13, 14, 15)
	rec, st := simulate(t, three(t, Deferred{}), reqs)
	require.Zero(t, st.Rejections())
	require.Len(t, rec.dispatches, 15)
	for k, d := range rec.dispatches {
		require.Len(t, d.IDs, 4, "batch %d", k)
		require.Equal(t, k%3, d.Exec, "batch %d", k)
	}
	require.Equal(t, dispatched{Exec: 0, At: ms(13.5), IDs: []uint64{16, 17, 18, 19}}, rec.dispatches[3])
	require.Equal(t, dispatched{Exec: 1, At: ms(16.5), IDs: []uint64{20, 21, 22, 23}}, rec.dispatches[4])
	require.Equal(t, dispatched{Exec: 2, At: ms(19.5), IDs: []uint64{24, 25, 26, 27}}, rec.dispatches[5])
	require.Equal(t, dispatched{Exec: 0, At: ms(22.5), IDs: []uint64{28, 29, 30, 31}}, rec.dispatches[6])

	// Eager executors behind the same router: R1, R2, R3 each start alone on
	// an idle gpu-let, and the batches stay small and requests are dropped.
	eager, est := simulate(t, three(t, Eager{}), reqs)
	require.Equal(t, []uint64{1}, eager.dispatches[0].IDs)
	small := 0
	for _, d := range eager.dispatches {
		if len(d.IDs) < 4 {
			small++
		}
	}
	require.Greater(t, small, len(eager.dispatches)/2, "eager batches: %v", eager.dispatches)
	require.NotZero(t, est.Rejections())
}

func TestRoute(t *testing.T) {
	l := linear(t, 1, 5, 4)
	// A forming batch of 2 due at 20, idle gpu-let, frontrun 20 − ℓ(3) = 12.
	forming := RouteState{FreeAt: ms(10), Queued: 2, Size: 2, Deadline: ms(20), Exec: ms(12), Latest: ms(13), Latency: l}
	idle := RouteState{FreeAt: ms(10), Latency: l}
	busy := func(until float64) RouteState { return RouteState{FreeAt: ms(until), Latency: l} }
	tests := []struct {
		name     string
		deadline float64
		targets  []Target
		pick     int
		how      Routing
	}{
		{"absorbed by forming batch", 30, []Target{{RouteState: idle}, {RouteState: forming}}, 1, Absorbed},
		{"tighter deadline still absorbed", 18, []Target{{RouteState: idle}, {RouteState: forming}}, 1, Absorbed},
		{"too tight for the batch: frees first", 17, []Target{{RouteState: busy(11)}, {RouteState: forming}, {RouteState: idle}}, 2, FreesFirst},
		{"frees first", 30, []Target{{RouteState: busy(14)}, {RouteState: busy(12)}, {RouteState: busy(13)}}, 1, FreesFirst},
		{"idle ties go to the lower index", 30, []Target{{RouteState: idle}, {RouteState: idle}}, 0, FreesFirst},
		{"draining skipped", 30, []Target{{RouteState: forming, Draining: true}, {RouteState: idle}}, 1, FreesFirst},
		{"down skipped", 30, []Target{{RouteState: idle, Down: true}, {RouteState: busy(20)}}, 1, FreesFirst},
		{"full batch cannot absorb", 30, []Target{{RouteState: RouteState{FreeAt: ms(10), Queued: 4, Size: 4, Deadline: ms(40), Exec: ms(10), Latency: l}}, {RouteState: busy(11)}}, 1, FreesFirst},
		{"deadline-limited queue cannot absorb", 60, []Target{{RouteState: RouteState{FreeAt: ms(10), Queued: 3, Size: 2, Deadline: ms(20), Exec: ms(10), Latency: l}}, {RouteState: busy(11)}}, 1, FreesFirst},
		{"soonest dispatch among absorbers", 40, []Target{
			{RouteState: forming},
			{RouteState: RouteState{FreeAt: ms(10), Queued: 1, Size: 1, Deadline: ms(18), Exec: ms(11), Latest: ms(12), Latency: l}},
		}, 1, Absorbed},
		{"unreachable goes where it ends soonest", 15, []Target{{RouteState: busy(12)}, {RouteState: busy(11)}}, 1, Unreachable},
		{"weights break ties", 30, []Target{{RouteState: idle, Weight: 1}, {RouteState: idle, Weight: 3}}, 1, FreesFirst},
		{"credit follows weights", 30, []Target{{RouteState: idle, Weight: 1, Credit: 1}, {RouteState: idle, Weight: 3, Credit: -1}}, 0, FreesFirst},
		{"a target past its share is passed over", 30, []Target{{RouteState: busy(11), Weight: 1, Credit: -5}, {RouteState: busy(14), Weight: 1}}, 1, FreesFirst},
		{"within its burst it is not", 30, []Target{{RouteState: busy(11), Weight: 1, Credit: -1}, {RouteState: busy(14), Weight: 1}}, 0, FreesFirst},
		{"spills past the share to meet the deadline", 30, []Target{{RouteState: busy(11), Weight: 1, Credit: -5}, {RouteState: busy(40), Weight: 1}}, 0, FreesFirst},
		{"a forming batch past its share is not joined", 30, []Target{{RouteState: forming, Weight: 1, Credit: -10}, {RouteState: idle, Weight: 1}}, 1, FreesFirst},
		{"other models' queued work counts", 40, []Target{{RouteState: RouteState{FreeAt: ms(10), Ahead: ms(10), Latency: l}}, {RouteState: busy(15)}}, 1, FreesFirst},
		{"other models' work bars absorbing", 20, []Target{{RouteState: RouteState{FreeAt: ms(10), Queued: 1, Size: 1, Deadline: ms(30), Exec: ms(12), Ahead: ms(8), Latency: l}}, {RouteState: busy(12)}}, 1, FreesFirst},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.targets[tc.pick].Sent
			i, how, err := Route(ms(10), ms(tc.deadline), tc.targets)
			require.NoError(t, err)
			require.Equal(t, tc.pick, i)
			require.Equal(t, tc.how, how)
			require.Equal(t, before+1, tc.targets[i].Sent)
		})
	}
	_, _, err := Route(ms(10), ms(30), []Target{{RouteState: idle, Draining: true}, {RouteState: RouteState{}}})
	require.ErrorIs(t, err, ErrNoTarget)
	_, _, err = Route(ms(10), ms(30), nil)
	require.ErrorIs(t, err, ErrNoTarget)
}

// TestRoutePredictsState: between two published states the router's own
// prediction keeps batches together: requests due at 20, 21, 22, 23 at
// t = 10 join the batch forming on gpu-let 0 until it is full (max batch 4);
// the fifth goes to gpu-let 1, free before gpu-let 0 ends that batch.
func TestRoutePredictsState(t *testing.T) {
	l := linear(t, 1, 5, 4)
	ts := []Target{{RouteState: RouteState{FreeAt: ms(10), Latency: l}}, {RouteState: RouteState{FreeAt: ms(10), Latency: l}}}
	var picks []int
	for i := range 5 {
		p, _, err := Route(ms(10), ms(20+float64(i)), ts)
		require.NoError(t, err)
		picks = append(picks, p)
	}
	require.Equal(t, []int{0, 0, 0, 0, 1}, picks)
	// By the fifth request the full batch on gpu-let 0 is predicted to run
	// from 10 to 10 + ℓ(4) = 19.
	require.Equal(t, RouteState{FreeAt: ms(19), Latency: l}, ts[0].RouteState)
}

// TestQueuedAtCountsWhatStillWaits: a request routed to an idle gpu-let is
// predicted to wait until its batch's time comes (the deferred policy's
// frontrun, ℓ(b) = b + 5 ms, deadline 20: 20 − ℓ(2) = 13) and to run from
// then on, though no state has said so; a batch whose gpu-let is busy waits
// until it frees. The state itself is not changed by asking.
func TestQueuedAtCountsWhatStillWaits(t *testing.T) {
	l := linear(t, 1, 5, 4)
	ts := []Target{{RouteState: RouteState{FreeAt: ms(10), Latency: l}}}
	_, _, err := Route(ms(10), ms(20), ts)
	require.NoError(t, err)
	st := ts[0].RouteState
	require.Equal(t, []int{1, 1, 0}, []int{st.QueuedAt(ms(10)), st.QueuedAt(ms(12.9)), st.QueuedAt(ms(13))})
	require.Equal(t, 1, st.Queued, "asking predicts on a copy")

	busy := RouteState{FreeAt: ms(30), Queued: 3, Size: 3, Exec: ms(12), Latency: l}
	require.Equal(t, []int{3, 0}, []int{busy.QueuedAt(ms(20)), busy.QueuedAt(ms(30))})
}

func TestSimUnroutableAndOrder(t *testing.T) {
	l := linear(t, 1, 5, 4)
	rec, st := simulate(t, one(Deferred{}, 0, l), []Request{{ID: 1, Model: 7, Arrival: 0, Deadline: ms(50)}})
	require.Equal(t, []rejected{{Exec: -1, At: 0, ID: 1, Why: Unroutable}}, rec.rejects)
	require.Equal(t, uint64(1), st.Rejected[Unroutable])

	sim, err := NewSim(one(Deferred{}, 0, l), nil)
	require.NoError(t, err)
	_, err = sim.Run(NewSliceSource([]Request{{ID: 1, Arrival: ms(5), Deadline: ms(50)}, {ID: 2, Arrival: ms(4), Deadline: ms(50)}}))
	require.ErrorIs(t, err, ErrTimeOrder)
	_, err = NewSim(nil, nil)
	require.ErrorIs(t, err, ErrBadConfig)
}

// TestRouteStateCountsOtherModels: a model's state on a shared gpu-let
// carries the other models' queued work, ℓ of their forming batches.
func TestRouteStateCountsOtherModels(t *testing.T) {
	rec := newRecorder()
	s, err := New(Config{}, rec)
	require.NoError(t, err)
	require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: linear(t, 1, 5, 16)}))
	require.NoError(t, s.AddModel(0, 1, ModelConfig{Latency: linear(t, 2, 3, 16)}))
	// Three requests of model 1 due at 40 wait for their frontrun; their
	// batch will take ℓ1(3) = 9.
	for i := range 3 {
		require.NoError(t, s.Submit(ms(float64(i)*0.01), Request{ID: uint64(i + 1), Model: 1, Deadline: ms(40)}))
	}
	require.Empty(t, rec.dispatches)
	st, err := s.RouteState(ms(1), 0)
	require.NoError(t, err)
	require.Equal(t, ms(9), st.Ahead)
	st, err = s.RouteState(ms(1), 1)
	require.NoError(t, err)
	require.Zero(t, st.Ahead, "a model's own queue is not ahead of it")
}

// TestRouteStateOfAnOverrunningBatch: a batch late by a little is reported
// to end now; one far past its expected end (a run that hangs) makes its
// gpu-let free only as long again, later at each report, and the router
// then sends requests to another gpu-let rather than behind it.
func TestRouteStateOfAnOverrunningBatch(t *testing.T) {
	rec := newRecorder()
	s, err := New(Config{Policy: Eager{}}, rec)
	require.NoError(t, err)
	lat := linear(t, 1, 5, 16) // ℓ(1) = 6 ms
	require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: lat}))
	require.NoError(t, s.Submit(0, Request{ID: 1, Model: 0, Deadline: ms(100)}))
	require.Len(t, rec.dispatches, 1)
	for _, tc := range []struct {
		now, freeAt time.Duration
		why         string
	}{
		{ms(3), ms(6), "running: its expected end"},
		{ms(10), ms(10), "a little late: free now"},
		{ms(56), ms(56), "50 ms past: not yet overrunning"},
		{ms(57), ms(108), "past the floor: as long again as it overran"},
		{ms(1006), ms(2006), "a second past: a second later"},
	} {
		st, err := s.RouteState(tc.now, 0)
		require.NoError(t, err)
		require.Equal(t, tc.freeAt, st.FreeAt, tc.why)
	}
	hung, err := s.RouteState(ms(1006), 0)
	require.NoError(t, err)
	idle := RouteState{FreeAt: ms(1006), Latency: lat}
	targets := []Target{{RouteState: hung, Weight: 1}, {RouteState: idle, Weight: 1}}
	for range 4 {
		i, _, err := Route(ms(1006), ms(1100), targets)
		require.NoError(t, err)
		require.Equal(t, 1, i, "not behind the hung run")
	}
}

// TestRouteFollowsWeights: over many requests to idle targets the split
// follows the weights, and credit stays within the bursts.
func TestRouteFollowsWeights(t *testing.T) {
	l := linear(t, 1, 5, 4)
	ts := []Target{{RouteState: RouteState{Latency: l}, Weight: 1}, {RouteState: RouteState{Latency: l}, Weight: 3}}
	for i := range 4000 {
		now := ms(float64(i) * 100) // every target idle again at each request
		for j := range ts {
			ts[j].RouteState = RouteState{FreeAt: now, Latency: l}
		}
		_, _, err := Route(now, now+ms(50), ts)
		require.NoError(t, err)
		for j := range ts {
			require.LessOrEqual(t, ts[j].Credit, 4.0)
			require.GreaterOrEqual(t, ts[j].Credit, -4.0)
		}
	}
	require.InDelta(t, 1000, ts[0].Sent, 4)
	require.InDelta(t, 3000, ts[1].Sent, 4)
}

// TestRoutePredictsDispatch: between two reports the router predicts that a
// batch dispatched once its time came (the frontrun passed, or the policy's
// DispatchAt reached), so a request is not sent to join a batch that has
// already left.
func TestRoutePredictsDispatch(t *testing.T) {
	l := linear(t, 1, 5, 8)
	// A batch of 2 due at 30 on gpu-let 0, dispatchable at once from 2
	// requests (DispatchAt), reported at 10; gpu-let 1 is busy until 14.
	ts := []Target{
		{RouteState: RouteState{FreeAt: ms(10), Queued: 1, Size: 1, Deadline: ms(30), Exec: ms(23), Latest: ms(24), Latency: l, DispatchAt: 2}},
		{RouteState: RouteState{FreeAt: ms(14), Latency: l}},
	}
	i, how, err := Route(ms(10), ms(30), ts)
	require.NoError(t, err)
	require.Equal(t, 0, i)
	require.Equal(t, Absorbed, how)
	require.Equal(t, ms(10), ts[0].Exec, "two requests reach DispatchAt: dispatchable at once")
	// At 10.5 the batch of 2 has left (10 → 17); a request due at 22 can
	// no longer join it, and gpu-let 1 frees first.
	i, how, err = Route(ms(10.5), ms(22), ts)
	require.NoError(t, err)
	require.Equal(t, 1, i)
	require.Equal(t, FreesFirst, how)
	require.Equal(t, ms(17), ts[0].FreeAt)
	require.Zero(t, ts[0].Queued)
}

// TestRoutePredictsIdleRule: under the idle rule the router predicts that a
// batch waiting on a free gpu-let leaves at its idle bound, before its
// frontrun: a lone request on an idle gpu-let at 10 (ℓ(b) = b + 5 ms, due at
// 100) leaves at 10 + 2·(2·ℓ(1) − ℓ(2)) = 20, not at 100 − ℓ(2) = 93.
func TestRoutePredictsIdleRule(t *testing.T) {
	l := linear(t, 1, 5, 8)
	for _, tc := range []struct {
		idle bool
		exec time.Duration
	}{{true, ms(20)}, {false, ms(93)}} {
		ts := []Target{{RouteState: RouteState{FreeAt: ms(10), Latency: l, DispatchAt: 8, IdleRule: tc.idle}}}
		_, _, err := Route(ms(10), ms(100), ts)
		require.NoError(t, err)
		require.Equal(t, tc.exec, ts[0].Exec, "idle rule %v", tc.idle)
	}
	// On a busy gpu-let the bound counts from when it frees (30).
	ts := []Target{{RouteState: RouteState{FreeAt: ms(30), Latency: l, DispatchAt: 8, IdleRule: true}}}
	_, _, err := Route(ms(10), ms(100), ts)
	require.NoError(t, err)
	require.Equal(t, ms(40), ts[0].Exec)
	// A gpu-let that has stood mostly free waits a part of the bound: with
	// three quarters of it cut, 10 + 2.5.
	ts = []Target{{RouteState: RouteState{FreeAt: ms(10), Latency: l, DispatchAt: 8, IdleRule: true, IdleCut: 0.75}}}
	_, _, err = Route(ms(10), ms(100), ts)
	require.NoError(t, err)
	require.Equal(t, ms(12.5), ts[0].Exec)
}

// A scheduler reports the part of the idle bound it cuts as its gpu-let
// stands free, so that the router predicts what it will do.
func TestRouteStateReportsTheIdleCut(t *testing.T) {
	rec := newRecorder()
	s, err := New(Config{}, rec)
	require.NoError(t, err)
	require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: linear(t, 1, 5, 8)}))
	st, err := s.RouteState(0, 0)
	require.NoError(t, err)
	require.Zero(t, st.IdleCut, "a new gpu-let waits the whole bound")
	st, err = s.RouteState(2*time.Second, 0)
	require.NoError(t, err)
	require.InDelta(t, 1-math.Exp(-2)/IdleBusyFull, st.IdleCut, 1e-9, "free for two seconds")
	s, err = New(Config{Policy: Eager{}}, rec)
	require.NoError(t, err)
	require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: linear(t, 1, 5, 8)}))
	st, err = s.RouteState(2*time.Second, 0)
	require.NoError(t, err)
	require.Zero(t, st.IdleCut, "no idle rule, nothing to cut")
}

// TestRouteSpillsPastABacklog: gpu-let 0 is within its share, gpu-let 1
// far past it, but gpu-let 0 has fallen behind: it is busy until 3 ms,
// then its neighbour's 3 ms of work and its forming batch of 2 run, and
// three full batches of 2 wait, each after 3 ms of the neighbour's work. A
// request due 40 ms from now would start there only at 6 + ℓ(2) + 3·(ℓ(2)
// + 3) = 43 ms: it spills to gpu-let 1. A backlog of less than one batch is the batch the request
// joins: with one request behind the forming batch it stays on gpu-let 0.
func TestRouteSpillsPastABacklog(t *testing.T) {
	l := linear(t, 1, 5, 2) // ℓ(2) = 7
	for _, tc := range []struct {
		queued int
		want   int
		how    Routing
	}{{8, 1, FreesFirst}, {3, 0, FreesFirst}} {
		ts := []Target{
			{RouteState: RouteState{FreeAt: ms(3), Queued: tc.queued, Size: 2, Deadline: ms(60), Latest: ms(53), Latency: l, Ahead: ms(3)}, Weight: 1, Credit: 2},
			{RouteState: RouteState{Latency: l}, Weight: 0.001, Credit: -3},
		}
		i, how, err := Route(0, ms(40), ts)
		require.NoError(t, err)
		require.Equal(t, tc.want, i, "%d queued", tc.queued)
		require.Equal(t, tc.how, how)
	}
}
