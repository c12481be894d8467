package daemon

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/daemon/repository"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/internal/monoclock"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
)

// silentExecutor is an executor's client as a stall leaves it: it answers
// nothing, and hear stands for a frame it sends once it runs again.
type silentExecutor struct{ frames atomic.Uint64 }

func (s *silentExecutor) Infer(ctx context.Context, _ *pb.InferRequest) (*pb.InferResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (s *silentExecutor) Heard() uint64 { return s.frames.Load() }
func (s *silentExecutor) hear()         { s.frames.Add(1) }

// TestAStalledExecutorIsRoutedAround: a gpu-let whose executor went silent
// with a request waiting gets no more requests while its sibling serves;
// one event says when it stalled and one when it was heard again, after
// which it takes its share again. With both silent the model is not ready
// and its refusal says why.
func TestAStalledExecutorIsRoutedAround(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	sup := &supervisor{events: newEvents(st, zap.NewNop())}
	run := func(id string) *gpuletRun {
		return &gpuletRun{id: id, sup: sup, models: map[string]*pb.LoadModelRequest{"m": {Name: "m"}}}
	}
	a, b := run("a"), run("b")
	n := &node{router: newRouter(), catalog: &catalog{models: map[string]*repository.Model{"m": askModel()}, pipelines: map[string]*repository.Model{}}}
	lat, err := sched.LinearLatency(time.Millisecond, 5*time.Millisecond, 8)
	require.NoError(t, err)
	n.router.install(map[string][]routeEntry{"m": {{g: a, weight: 1, lat: lat}, {g: b, weight: 1, lat: lat}}})
	route := func(requests int) map[string]int {
		sent := map[string]int{}
		for range requests {
			at := monoclock.Of(time.Now())
			for _, g := range []*gpuletRun{a, b} {
				n.router.update(g, &pb.ExecutorState{AtMonoNs: at, FreeAtMonoNs: at, Models: []*pb.ModelState{{Name: "m"}}})
			}
			_, g, _, err := n.router.routeAny([]string{"m"}, n.router.now()+time.Second, n.router.now()+time.Second, nil)
			if err != nil {
				sent[err.Error()]++
				continue
			}
			sent[g.id]++
		}
		return sent
	}
	require.Equal(t, map[string]int{"a": 50, "b": 50}, route(100), "equal weights split the requests")
	stalls := func() []store.Event {
		evs, err := st.Events(context.Background(), 0, 0)
		require.NoError(t, err)
		var out []store.Event
		for _, ev := range evs {
			if ev.Kind == EventExecutorStall {
				out = append(out, ev)
			}
		}
		return out
	}

	ca, cb := &silentExecutor{}, &silentExecutor{}
	due := time.Now()
	a.markStalled(ca, 0, "m", due, ca.Heard())
	a.markStalled(ca, 0, "m", due.Add(time.Second), ca.Heard()) // another request finds it silent: the same stall
	require.True(t, a.stalled())
	require.Equal(t, due, a.stalledSince())
	require.Equal(t, map[string]int{"b": 100}, route(100), "the stalled gpu-let gets nothing")
	require.True(t, n.readyIn("m", n.router.models()), "its sibling serves the model")
	evs := stalls()
	require.Len(t, evs, 1)
	require.Equal(t, store.SeverityWarning, evs[0].Severity)
	require.Contains(t, evs[0].Message, "executor on a sent nothing since a m request went to it, due ")
	require.Equal(t, map[string]string{"gpulet": "a", "models": "m", "model": "m"}, evs[0].Attrs)

	b.markStalled(cb, 0, "m", due, cb.Heard())
	require.Equal(t, map[string]int{"route m: no gpu-let serves the model: route request: no routable target among 2 targets": 10}, route(10), "both stalled: no gpu-let takes it")
	require.False(t, n.readyIn("m", n.router.models()), "no gpu-let of the model answers")
	why, restarting := n.comingBack("m", n.router.models())
	require.True(t, restarting)
	require.Regexp(t, `^its executor on [ab] has sent nothing since \S+ \(stopped, starved or stuck\); its health checks restart it if it stays silent$`, why)

	ca.hear() // a's executor runs again: a late answer, or its state
	require.False(t, a.stalled())
	require.True(t, a.stalledSince().IsZero())
	require.Equal(t, map[string]int{"a": 100}, route(100), "a serves again; b is still silent")
	a.heardAgain(time.Now())
	a.heardAgain(time.Now()) // the next tick: nothing more to say
	b.heardAgain(time.Now()) // still silent: nothing to say
	evs = stalls()
	require.Len(t, evs, 3, "a's stall, b's, and a's end")
	require.Equal(t, store.SeverityInfo, evs[2].Severity)
	require.Regexp(t, `^executor on a answers again, after about \S+ without a word$`, evs[2].Message)
	require.Nil(t, a.stall.Load(), "the monitor's tick cleared the mark")

	// A new stall of a after it was heard is a new event.
	a.markStalled(ca, 0, "m", time.Now(), ca.Heard())
	require.Len(t, stalls(), 4)
	require.True(t, a.stalled())

	// A new executor ends the stall; a request to the old one that finds
	// it silent only now marks nothing.
	a.gen.Add(1)
	require.False(t, a.stalled(), "another executor runs")
	a.stall.Store(nil)
	a.markStalled(ca, 0, "m", time.Now(), ca.Heard())
	require.False(t, a.stalled())
	require.Nil(t, a.stall.Load())
	require.Len(t, stalls(), 4)
}

// readLate is an executor's client whose frames the daemon reads late: it
// answers nothing by the deadline, and its Heard moves only from its
// (after+1)-th reading on, as when the answers lay unread in the socket
// while the daemon was short of CPU; after -1 never moves.
type readLate struct {
	after int
	reads atomic.Int64
	wake  time.Duration // how late the call returns after its wait ended
}

func (r *readLate) Infer(ctx context.Context, _ *pb.InferRequest) (*pb.InferResponse, error) {
	<-ctx.Done()
	time.Sleep(r.wake)
	return nil, ctx.Err()
}

func (r *readLate) Heard() uint64 {
	if n := r.reads.Add(1); r.after >= 0 && n > int64(r.after) {
		return 1
	}
	return 0
}

// TestASilentRequestMarksAStallOnlyWithoutAWord: a request unanswered by
// its deadline marks its gpu-let stalled only when the executor stays
// silent a moment longer; a frame read in that moment, or read before the
// mark was even set, leaves it routable (a mark taken from the frames heard
// then lasted as long as the executor had nothing more to say, and the
// router skipped it all that while), and so does a wait that ended late,
// the daemon itself not running.
func TestASilentRequestMarksAStallOnlyWithoutAWord(t *testing.T) {
	tests := []struct {
		name    string
		after   int           // Heard's readings before it moves; -1: never
		wake    time.Duration // the daemon's own delay
		stalled bool
	}{
		{"never heard: stalled", -1, 0, true},
		{"heard once the call gave up", 2, 0, false}, // ask's two readings see nothing
		{"heard a moment later", 5, 0, false},
		{"the daemon ran late", -1, 2 * pauseLate, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, st.Close()) })
			g := &gpuletRun{id: "a", sup: &supervisor{events: newEvents(st, zap.NewNop())}, models: map[string]*pb.LoadModelRequest{"m": {Name: "m"}}}
			n := &node{}
			client := &readLate{after: tc.after, wake: tc.wake}
			_, ierr := n.askOn(context.Background(), g, 0, client, askModel(), nil, nil, time.Now(), false)
			require.NotNil(t, ierr)
			require.Equal(t, reasonDeadline, ierr.reason)
			require.Equal(t, tc.stalled, g.stalled())
			evs, err := st.Events(context.Background(), 0, 0)
			require.NoError(t, err)
			if !tc.stalled {
				require.Equal(t, "m: no answer by the deadline", ierr.msg)
				require.Empty(t, evs)
				return
			}
			require.Equal(t, "m: no answer by the deadline: its executor on a has sent nothing since the request went to it", ierr.msg)
			require.Len(t, evs, 1)
			require.Equal(t, EventExecutorStall, evs[0].Kind)
		})
	}
}

// TestAStallMarkCountsFromTheRequest: a mark ends with any frame heard
// since the request that found the executor silent went out, one read
// before the mark was set included.
func TestAStallMarkCountsFromTheRequest(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	g := &gpuletRun{id: "a", sup: &supervisor{events: newEvents(st, zap.NewNop())}, models: map[string]*pb.LoadModelRequest{"m": {Name: "m"}}}
	c := &silentExecutor{}
	sent := c.Heard()
	c.hear() // its late answer, read before the mark
	g.markStalled(c, 0, "m", time.Now(), sent)
	require.False(t, g.stalled(), "the executor was heard after the request went out")
	g.markStalled(c, 0, "m", time.Now(), c.Heard())
	require.True(t, g.stalled(), "silent since this request went out")
	c.hear()
	require.False(t, g.stalled())
}

// TestAnswerGrace: the daemon waits for an answer the model's SLO past its
// deadline, from 200 ms to 1 s.
func TestAnswerGrace(t *testing.T) {
	for _, tc := range []struct{ slo, want time.Duration }{
		{5 * time.Millisecond, 200 * time.Millisecond},
		{300 * time.Millisecond, 300 * time.Millisecond},
		{5 * time.Second, time.Second},
	} {
		require.Equal(t, tc.want, answerGrace(tc.slo), "SLO %s", tc.slo)
	}
}

// TestAPlanKeepsTheGpuletThatAnswers: of two running gpu-lets of the same
// shape and models, a plan with one keeps the one whose executor answers,
// whichever the supervisor lists first, and stops the one restarting,
// silent, or holding a request unanswered well past its deadline.
func TestAPlanKeepsTheGpuletThatAnswers(t *testing.T) {
	let := gpulet.GPULet{Size: 50, Models: []gpulet.Placement{{Name: "a", Batch: 8, Rate: 100}}}
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "cpu", GPULets: []gpulet.GPULet{let}}}}
	for _, tc := range []struct {
		name string
		harm func(n *node, g *gpuletRun)
	}{
		{"its executor is restarting", func(_ *node, g *gpuletRun) { g.down.Store(true) }},
		{"its executor is silent", func(_ *node, g *gpuletRun) {
			g.stall.Store(&stallMark{client: &silentExecutor{}, gen: g.gen.Load(), since: time.Now()})
		}},
		{"a run of its executor may never end", func(n *node, g *gpuletRun) {
			n.crashes.lost(executorGen{g.id, g.gen.Load()}, 1, lostRequest{model: "a"}, time.Now(), time.Now().Add(time.Minute))
		}},
	} {
		for _, unwell := range []string{"x1", "x2"} {
			t.Run(tc.name+", "+unwell, func(t *testing.T) {
				n := &node{sup: &supervisor{running: map[string]*gpuletRun{}}}
				for _, id := range []string{"x1", "x2"} {
					n.sup.running[id] = &gpuletRun{id: id, device: mps.Device{ID: "cpu"}, planned: let,
						models: map[string]*pb.LoadModelRequest{"a": {Name: "a"}}}
				}
				tc.harm(n, n.sup.running[unwell])
				running := n.running()
				require.Len(t, running, 2)
				require.NotEqual(t, unwell, running[0].H.id, "the gpu-let that answers comes first")
				d := control.Changes(running, plan)
				require.Equal(t, 1, d.Count(gpulet.ActionKeep))
				require.Equal(t, 1, d.Count(gpulet.ActionStop))
				for _, c := range d.Changes {
					if c.Action == gpulet.ActionStop {
						require.Equal(t, unwell, running[c.OldIndex].H.id, "the unwell one stops")
					}
				}
			})
		}
	}
}
