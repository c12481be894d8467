package daemon

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/profiler/store"
)

func TestLiveProfilesQueue(t *testing.T) {
	q := newLiveProfiles()
	a := &repository.Model{Name: "a"}
	require.True(t, q.ask(a))
	require.True(t, q.ask(a), "queued already")
	require.Len(t, q.queue, 1, "once")
	for i := range liveQueueLen - 1 {
		require.True(t, q.ask(&repository.Model{Name: fmt.Sprint("m", i)}))
	}
	require.False(t, q.ask(&repository.Model{Name: "late"}), "a full queue says so")
	require.Equal(t, a, <-q.queue)
	q.done("a")
	require.True(t, q.ask(a), "measured, it may be asked for again")
}

// A model measured beside the serving gpu-lets is not planned on the points
// its profile has stored so far, only once it is measured: on an H200 such
// a model was placed by a re-plan 4 s into its profile, on its first batch
// sizes, and loaded again on the serving gpu-let as larger ones came in. A
// profile on another device type still plans it meanwhile, as does the
// profile a model measured again had before.
func TestAModelBeingProfiledIsNotPlanned(t *testing.T) {
	ctx := context.Background()
	n, st, cpu := lendingNode(t)
	n.catalog = newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), st, n.events, zap.NewNop())
	n.live = newLiveProfiles()
	m := mlpFile("a", 1_000_000)
	m.Version, m.Config.SLO = 1, config.Duration(50*time.Millisecond)
	require.NoError(t, n.catalog.add(ctx, m))
	putProfile(t, st, m, cpu.Type, 2) // the points measured so far
	rates := map[string]float64{"mlp": 10}

	for _, tc := range []struct {
		measuring string
		planned   bool
	}{
		{cpu.Type, false},
		{"", true},
		{"another-type", true},
	} {
		n.live.measure(m.Name, tc.measuring, nil)
		in, missing := n.planInput(ctx, rates)
		if !tc.planned {
			require.Empty(t, in.Demands, tc.measuring)
			require.Equal(t, "mlp is being profiled on "+cpu.Type, missing["mlp"])
			continue
		}
		require.Len(t, in.Demands, 1, tc.measuring)
		require.Empty(t, missing)
	}

	// Measured again (its profile_shapes changed), it is placed meanwhile
	// on the profile it had when the measure began.
	held, err := n.book.profile(ctx, m, cpu)
	require.NoError(t, err)
	putProfile(t, st, m, cpu.Type, 1) // the new run's first points
	n.live.measure(m.Name, cpu.Type, held)
	in, missing := n.planInput(ctx, rates)
	require.Empty(t, missing)
	require.Len(t, in.Demands, 1)
	p50s := func(p *gpulet.Profile) []float64 {
		var out []float64
		for _, pt := range p.Points() {
			out = append(out, pt.P50MS)
		}
		return out
	}
	require.Equal(t, []float64{2, 4, 8}, p50s(in.Demands[0].Profile), "the held profile, not the points stored so far")
	n.live.measure(m.Name, "", nil)
	require.Nil(t, n.live.heldProfile(m.Name, cpu.Type), "forgotten once measured")
}

// A model queued for a profile beside the serving gpu-lets is on its way,
// not unservable: its state is waiting and its reason says what it waits
// for; the node stays ready meanwhile (under strict_readiness it waits for
// it); a request to it is refused as one a retry may cure.
func TestAModelQueuedForAProfileIsWaiting(t *testing.T) {
	n := &node{router: newRouter(), live: newLiveProfiles(), catalog: &catalog{models: map[string]*repository.Model{}, pipelines: map[string]*repository.Model{}, index: &repository.Index{}}}
	cfg := config.Default()
	n.cfg.Store(&cfg)
	m := &repository.Model{Name: "digits", Family: "digits"}
	n.catalog.models[m.Name] = m
	require.True(t, n.queueLive(m))
	require.Equal(t, stateWaiting, n.modelState(m.Name, n.router.models()))
	n.ready.Store(true) // the first plan was applied: the node serves its other models
	ready, waiting, _ := n.readiness()
	require.True(t, ready, "a model measured while the node serves does not take the node out of rotation")
	require.Empty(t, waiting)
	strict := cfg
	strict.StrictReadiness = true
	n.cfg.Store(&strict)
	ready, waiting, _ = n.readiness()
	require.False(t, ready, "unless every model must serve")
	require.Equal(t, []string{"digits"}, waiting)
	n.cfg.Store(&cfg)
	require.Equal(t, "waiting for a gpu-let: to be profiled (a quick profile beside the serving gpu-lets); it is placed once measured", n.notReadyReason(m.Name))
	_, _, _, ierr := n.dispatchAny(context.Background(), []*repository.Model{m}, nil, nil, nil, time.Now().Add(time.Second))
	require.NotNil(t, ierr)
	require.Equal(t, reasonUnroutable, ierr.reason)
	require.True(t, ierr.retryable())
	require.Contains(t, ierr.msg, "digits is not served yet: to be profiled")
}

// A model whose every profile run stopped midway (the daemon stopped
// during its first start's profile) is measured again, as one without a
// profile is: the points kept miss sizes and batches. Points without runs
// (imported), a run measuring now and any completed run leave it be.
func TestAProfileThatNeverFinishedIsMeasuredAgain(t *testing.T) {
	ctx := context.Background()
	n, m, cpu := mlpOnTheCPU(t)
	jobs := func() int {
		js := n.missingProfiles(ctx, m)
		for _, j := range js {
			require.Contains(t, j.again, "every earlier profile run of this file stopped midway", "said to be measured again")
		}
		return len(js)
	}
	require.Zero(t, jobs(), "points without runs")

	finish := func(status store.RunStatus) int64 {
		run, err := n.st.StartRun(ctx, m.SHA256, cpu.Type, "quick")
		require.NoError(t, err)
		if status != store.RunRunning {
			require.NoError(t, n.st.FinishRun(ctx, run.ID, status, "interrupted: 3 of 8 points measured and kept"))
		}
		return run.ID
	}
	finish(store.RunIncomplete)
	require.Equal(t, 1, jobs(), "an interrupted run")
	finish(store.RunFailed)
	require.Equal(t, 1, jobs(), "and a failed one")
	running := finish(store.RunRunning)
	require.Zero(t, jobs(), "a run measuring it now")
	require.NoError(t, n.st.FinishRun(ctx, running, store.RunComplete, "8 points"))
	require.Zero(t, jobs(), "a run that completed")
	finish(store.RunIncomplete)
	require.Zero(t, jobs(), "a later run stopped midway keeps the completed one's points")
}

// A model whose profile_shapes changed since its newest complete profile
// run (a text model's sequence length edited, then loaded again) is
// measured again, saying at which shapes it was measured and which it
// gives now; one whose shapes agree, or whose profile has no complete
// run, is left be.
func TestAModelWhoseProfileShapesChangedIsMeasuredAgain(t *testing.T) {
	ctx := context.Background()
	n, m, cpu := mlpOnTheCPU(t)
	again := func() []string {
		var out []string
		for _, j := range n.missingProfiles(ctx, m) {
			require.NotNil(t, j.held, "the profile it serves on meanwhile")
			out = append(out, j.again)
		}
		return out
	}
	m.Config.ProfileShapes = map[string][]int64{"input": {128}}
	require.Empty(t, again(), "no complete run says at which shapes it was measured (imported)")

	complete := func(msg string) {
		run, err := n.st.StartRun(ctx, m.SHA256, cpu.Type, msg)
		require.NoError(t, err)
		require.NoError(t, n.st.FinishRun(ctx, run.ID, store.RunComplete, msg+"; 8 points, 0 co-locations"))
	}
	complete("source: measured with executors (policy timeout:1ms, engine time per batch)")
	require.Equal(t, []string{"its inputs were measured at 1 in each dynamic dimension, and profile_shapes gives input:128 now"}, again())

	complete("source: measured with executors (policy timeout:1ms, engine time per batch); inputs at input:128")
	require.Empty(t, again(), "measured at the shapes it gives")

	m.Config.ProfileShapes = nil
	require.Equal(t, []string{"its inputs were measured at input:128, and profile_shapes gives 1 in each dynamic dimension now"}, again())
}

// A TorchScript model is not profiled on the CPU, which cannot run it, and
// says why it cannot be placed there: only emulated devices serve it.
func TestATorchScriptModelIsNotProfiledOnTheCPU(t *testing.T) {
	ctx := context.Background()
	n, m, cpu := mlpOnTheCPU(t)
	m.Platform = repository.PlatformTorchScript
	_, err := n.book.profile(ctx, m, cpu)
	require.ErrorIs(t, err, repository.ErrEmulatedOnly)
	require.NotErrorIs(t, err, errNoProfile, "nothing to measure")
	require.Empty(t, n.missingProfiles(ctx, m))
}
