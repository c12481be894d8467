package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler"
	"github.com/gpulet/gpuletd/profiler/store"
)

// While the daemon profiles the models it has no profile for at start
// (minutes on a cold GPU node with several models, nothing served), each
// model says how far it has come wherever its readiness is asked, not only
// that it is "being profiled or placed"; a profile that fails says so.
func TestProfilingAtStartSaysHowFarEachModelHasCome(t *testing.T) {
	n, _ := historyNode(t)
	a, b, c := &repository.Model{Name: "a"}, &repository.Model{Name: "b"}, &repository.Model{Name: "c"}
	n.catalog = &catalog{models: map[string]*repository.Model{"a": a, "b": b, "c": c}, pipelines: map[string]*repository.Model{}}
	n.router = newRouter()
	cpu, gpu := mps.Device{ID: "cpu"}, mps.Device{ID: "gpu0"}
	jobs := []profileJob{{m: a, d: cpu}, {m: b, d: cpu}, {m: a, d: gpu}, {m: c, d: cpu}}
	seen := map[int]map[string]string{}
	step := 0
	n.runProfileJobs(context.Background(), jobs, time.Time{}, func(_ context.Context, j profileJob) error {
		seen[step] = map[string]string{"a": n.notReadyReason("a"), "b": n.notReadyReason("b"), "c": n.notReadyReason("c")}
		p := n.profiling.Load()
		require.NotNil(t, p)
		require.Equal(t, profilingStatus{Model: j.m.Name, Device: j.d.ID, Since: p.Since, Profile: step + 1, Of: 4}, *p, "the job running now, for the status")
		step++
		if j.m == b {
			return errors.New("executor exited")
		}
		return nil
	})
	require.Len(t, seen, 4)
	require.Regexp(t, `^waiting for a gpu-let: being profiled on cpu since \d\d:\d\d:\d\d \(profile 1 of 4\)$`, seen[0]["a"])
	require.Equal(t, "waiting for a gpu-let: to be profiled on cpu after 1 other profile(s)", seen[0]["b"])
	require.Equal(t, "waiting for a gpu-let: to be profiled on cpu after 3 other profile(s)", seen[0]["c"])

	require.Equal(t, "waiting for a gpu-let: to be profiled on gpu0 after 1 other profile(s)", seen[1]["a"], "a's next profile, not its first done")
	require.Contains(t, seen[1]["b"], "(profile 2 of 4)")

	require.Contains(t, seen[2]["a"], "being profiled on gpu0")
	require.Equal(t, "profiling on cpu failed: executor exited (run: gpuletd profile b --device cpu)", seen[2]["b"], "a failure is why, not progress")
	require.Equal(t, "waiting for a gpu-let: to be profiled on cpu after 1 other profile(s)", seen[2]["c"])

	require.Equal(t, "waiting for a gpu-let: profiled; the first plan places it once the other models are profiled (1 profile(s) to go)", seen[3]["a"])
	require.Equal(t, "waiting for a gpu-let: profiled; the first plan is being made", n.notReadyReason("c"))
	require.Nil(t, n.profiling.Load(), "all done: nothing is being profiled")

	ready, waiting, _ := n.readiness()
	require.False(t, ready)
	require.Equal(t, []string{"a", "c"}, waiting, "named before the first plan too; b says why it cannot be served")

	n.progress.reset() // the first plan is applied
	require.Equal(t, waitingReason, n.notReadyReason("a"))
}

// A daemon told to stop while it profiles at start makes no first plan: a
// plan with a cancelled context failed every placement ("get latency …:
// context canceled") and left those warnings in the history, and the
// daemon said it was ready on its way out.
func TestAStopDuringTheStartProfilesMakesNoPlan(t *testing.T) {
	n, st := historyNode(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.False(t, n.planFirst(ctx))
	require.False(t, n.ready.Load())
	events, err := st.Events(context.Background(), 0, 100)
	require.NoError(t, err)
	require.Empty(t, events)
}

// A profile whose latest run stopped midway (the daemon stopped while it
// profiled at start, a Ctrl-C) still places the model with the points it
// has; the profile says so, with the command that completes it, where an
// operator looks at the model (GET /api/v1/models/{m}/profile, gpuletd
// models show, the page).
func TestAnUnfinishedProfileRunIsSaid(t *testing.T) {
	ctx := context.Background()
	n, st := historyNode(t)
	m := &repository.Model{Name: "resnet18", SHA256: strings.Repeat("ab", 32)}
	cpu := mps.Device{ID: "cpu", Type: "cpu", Kind: mps.KindCPU}
	require.Nil(t, n.unfinishedProfile(ctx, m, cpu), "no run yet")

	run, err := st.StartRun(ctx, m.SHA256, "cpu", "quick")
	require.NoError(t, err)
	require.NoError(t, st.FinishRun(ctx, run.ID, store.RunIncomplete, "interrupted: 6 of 8 points measured and kept"))
	u := n.unfinishedProfile(ctx, m, cpu)
	require.NotNil(t, u)
	require.Equal(t, store.RunIncomplete, u.Status)
	require.Equal(t, "interrupted: 6 of 8 points measured and kept", u.Message)
	require.Equal(t, "gpuletd profile resnet18 --device cpu", u.Fix)
	require.Nil(t, n.unfinishedProfile(ctx, m, mps.Device{ID: "emu0", Type: "cpu", Kind: mps.KindEmulated}), "emulated devices are not measured")

	run, err = st.StartRun(ctx, m.SHA256, "cpu", "full")
	require.NoError(t, err)
	require.NoError(t, st.FinishRun(ctx, run.ID, store.RunComplete, "done"))
	require.Nil(t, n.unfinishedProfile(ctx, m, cpu), "a later run completed it")
}

// A first start that has profiled for its budget starts no further model:
// the first plan serves the models measured so far, and the others are
// measured beside them, each saying so. A repository of many models left
// every one of them unserved for minutes (27 distinct models took 95 s on
// a 2-core VM, a minute or two each on a GPU).
func TestAStartPastItsBudgetServesTheProfiledModels(t *testing.T) {
	n, st := historyNode(t)
	a, b, c := &repository.Model{Name: "a"}, &repository.Model{Name: "b"}, &repository.Model{Name: "c"}
	n.catalog = &catalog{models: map[string]*repository.Model{"a": a, "b": b, "c": c}, pipelines: map[string]*repository.Model{}}
	n.router = newRouter()
	n.live = newLiveProfiles()
	cpu, gpu := mps.Device{ID: "cpu"}, mps.Device{ID: "gpu0"}
	jobs := []profileJob{{m: a, d: cpu}, {m: a, d: gpu}, {m: b, d: cpu}, {m: c, d: cpu}, {m: c, d: gpu}}
	var ran []string
	until := time.Now().Add(time.Hour)
	rest := n.runProfileJobs(context.Background(), jobs, until, func(_ context.Context, j profileJob) error {
		ran = append(ran, j.m.Name+"@"+j.d.ID)
		if len(ran) == 1 {
			require.Contains(t, n.notReadyReason("b"), "to be profiled on cpu after 2 other profile(s)")
		}
		if len(ran) == 3 {
			require.Regexp(t, `profiled; the first plan places it once the other models are profiled \(3 profile\(s\) to go\), by about \d\d:\d\d:\d\d at the latest$`, n.notReadyReason("a"))
		}
		return nil
	})
	require.Empty(t, rest, "within its budget every job runs")
	require.Equal(t, []string{"a@cpu", "a@gpu0", "b@cpu", "c@cpu", "c@gpu0"}, ran)

	ran = nil
	rest = n.runProfileJobs(context.Background(), jobs, time.Now(), func(_ context.Context, j profileJob) error {
		ran = append(ran, j.m.Name+"@"+j.d.ID)
		return nil
	})
	require.Equal(t, []string{"a@cpu", "a@gpu0"}, ran, "the first model whole, with its jobs on every device")
	require.Equal(t, jobs[2:], rest)
	require.Nil(t, n.profiling.Load(), "nothing is being profiled once it stops")

	var left []*repository.Model
	for _, j := range rest {
		left = append(left, j.m)
	}
	n.profileAllLater(left, "profiled at start within 30s: the profiled models serve now")
	require.True(t, n.live.pending("b"))
	require.True(t, n.live.pending("c"))
	require.False(t, n.live.pending("a"))
	require.Len(t, n.live.queue, 2, "each model once")
	n.progress.reset() // the first plan is applied
	require.Equal(t, "waiting for a gpu-let: to be profiled (a quick profile beside the serving gpu-lets); it is placed once measured", n.notReadyReason("c"))
	events, err := st.Events(context.Background(), 0, 100)
	require.NoError(t, err)
	require.Len(t, events, 1)
	require.Equal(t, "profiled at start within 30s: the profiled models serve now; b, c will be profiled beside them, each placed once measured", events[0].Message)
}

func TestSmallestFirst(t *testing.T) {
	m := func(name string, bytes int64) *repository.Model { return &repository.Model{Name: name, Bytes: bytes} }
	var names []string
	for _, x := range smallestFirst([]*repository.Model{m("a", 45_000_000), m("b", 250_000), m("c", 2_100_000), m("d", 250_000)}) {
		names = append(names, x.Name)
	}
	require.Equal(t, []string{"b", "d", "c", "a"}, names, "by size, then in the order given (by name)")
}

func TestQuickBatches(t *testing.T) {
	tests := []struct {
		maxB int
		want []int
	}{
		{maxB: 1, want: []int{1}},
		{maxB: 4, want: []int{1, 2, 4}},
		{maxB: 32, want: []int{1, 2, 4, 8, 16, 32}},
		{maxB: 20, want: []int{1, 2, 4, 8, 16, 20}},
		{maxB: 5, want: []int{1, 2, 4, 5}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.maxB), func(t *testing.T) {
			require.Equal(t, tt.want, quickBatches(tt.maxB))
		})
	}
}

func TestPastBudget(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 20, 0, time.UTC)
	until := now.Add(10 * time.Second)
	tests := []struct {
		name    string
		until   time.Time
		longest time.Duration
		past    bool
	}{
		{name: "no budget", longest: time.Hour},
		{name: "the longest so far ends within it", until: until, longest: 9 * time.Second},
		{name: "the longest so far would end past it", until: until, longest: 11 * time.Second, past: true},
		{name: "it would end right at it", until: until, longest: 10 * time.Second, past: true},
		{name: "it ran out", until: now, longest: time.Millisecond, past: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.past, pastBudget(now, tt.until, tt.longest))
		})
	}
}

// A profile that failed says what to do: a model its executor cannot load
// or run is checked and mended, anything else measured by hand to see why.
func TestProfileFailedSaysWhatToDo(t *testing.T) {
	m := &repository.Model{Name: "bad:2", Family: "bad"}
	d := mps.Device{ID: "gpu0"}
	load := fmt.Errorf("profile bad on gpu0 at 100%%: %w: load failed: No Op registered for Cxnv", profiler.ErrModelLoad)
	require.Equal(t, "profiling on gpu0 failed: "+load.Error()+" (the model does not load or run there: `gpuletd models check` reads it as ONNX Runtime does; mended, `gpuletd models load bad` loads it again)",
		profileFailed(m, d, load))
	require.Equal(t, "profiling on gpu0 failed: executor exited (run: gpuletd profile bad:2 --device gpu0)", profileFailed(m, d, errors.New("executor exited")))
}
