package daemon

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/internal/monoclock"
)

// A request's level is the priority it asks for when that is one of its
// model's levels, else the model's default (as Triton takes it); a model
// without levels has none.
func TestPriorityLevel(t *testing.T) {
	three := repository.ModelConfig{PriorityLevels: 3, DefaultPriority: 2}
	for _, tc := range []struct {
		name string
		c    repository.ModelConfig
		p    int64
		want int
	}{
		{"no levels", repository.ModelConfig{}, 1, 0},
		{"one level", repository.ModelConfig{PriorityLevels: 1, DefaultPriority: 1}, 1, 0},
		{"the highest", three, 1, 1},
		{"the lowest", three, 3, 3},
		{"none asked", three, 0, 2},
		{"past the levels", three, 4, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, priorityLevel(tc.c, tc.p))
		})
	}
}

// A level keeps a reserve for the levels above it only while one of them
// came within priorityRecent, in proportion to how far below the highest of
// them it is; level 1 and a model without levels keep none. Each model
// counts its own.
func TestPriorityReserve(t *testing.T) {
	var p priorities
	s, most := time.Second, 0.4
	require.Zero(t, p.reserve("m", 3, 3, 10*s, most), "no higher level came yet")
	require.Zero(t, p.reserve("m", 3, 1, 10*s, most))
	require.InDelta(t, most, p.reserve("m", 3, 3, 10*s, most), 1e-12)
	require.Zero(t, p.reserve("other", 3, 3, 10*s, most), "another model's levels")
	require.InDelta(t, most/2, p.reserve("m", 3, 2, 10*s+priorityRecent/2, most), 1e-12)
	require.InDelta(t, most, p.reserve("m", 3, 3, 10*s+priorityRecent, most), 1e-12)
	require.InDelta(t, most/2, p.reserve("m", 3, 3, 10*s+priorityRecent+time.Millisecond, most), 1e-12,
		"level 1 stopped coming, level 2 came since")
	require.Zero(t, p.reserve("m", 3, 2, 10*s+priorityRecent+time.Millisecond, most), "level 2 is the highest coming")
	require.Zero(t, p.reserve("m", 3, 3, 20*s, most), "none above came within priorityRecent")
	require.Zero(t, p.reserve("m", 0, 0, 11*s, most))
	require.Zero(t, p.reserve("m", 2, 2, 11*s, most), "new levels start afresh")

	require.Equal(t, 30*time.Millisecond, admitBy(0, 30*time.Millisecond, 0))
	require.Equal(t, 20*time.Millisecond, admitBy(0, 30*time.Millisecond, 1.0/3))
	require.Equal(t, 30*time.Millisecond, admitBy(40*time.Millisecond, 30*time.Millisecond, 1.0/3), "past its deadline: routed as it is")
}

// On a gpu-let busy for most of the next 30 ms SLO, a request of the
// lower of two levels is routed while none of the higher one comes; once
// one has come, the lower level's requests (and those that name no level
// or one past the levels, the model's default) are shed with a reason of
// their own, while the higher level's are still routed. Every routed
// request here meets the gpu-let's executor restarting. Without a reserve
// the lower level is routed as the higher.
func TestALowPriorityGivesWay(t *testing.T) {
	n := &node{log: zap.NewNop(), router: newRouter(), rates: newRateMeter(0.5, time.Now()), stepRates: newRateMeter(0.5, time.Now()),
		catalog: newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), nil, nil, zap.NewNop())}
	n.metrics = newMetrics(n)
	cfg := config.Default()
	n.cfg.Store(&cfg)
	m := &repository.Model{Name: "m", Family: "m", Config: repository.ModelConfig{MaxBatchSize: 8, PriorityLevels: 2, DefaultPriority: 2}}
	lat, err := sched.LinearLatency(100*time.Microsecond, time.Millisecond, 8)
	require.NoError(t, err)
	g := &gpuletRun{id: "g"}
	n.router.install(map[string][]routeEntry{"m": {{g: g, weight: 1, lat: lat}}})
	for _, tc := range []struct {
		name     string
		priority int64
		reason   string
	}{
		{"the lower level, alone", 2, reasonExecutorDown},
		{"the higher level", 1, reasonExecutorDown},
		{"the lower level, after it", 2, reasonShedPriority},
		{"no level", 0, reasonShedPriority},
		{"past the levels", 3, reasonShedPriority},
		{"the higher level again", 1, reasonExecutorDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			n.router.update(g, &pb.ExecutorState{AtMonoNs: monoclock.Of(now), FreeAtMonoNs: monoclock.Of(now.Add(24 * time.Millisecond)),
				Models: []*pb.ModelState{{Name: "m"}}})
			ctx := withPriority(context.Background(), tc.priority)
			_, _, _, ierr := n.dispatchAny(ctx, []*repository.Model{m}, nil, nil, nil, now.Add(30*time.Millisecond))
			require.NotNil(t, ierr)
			require.Equal(t, tc.reason, ierr.reason, ierr.msg)
			if tc.reason == reasonShedPriority {
				require.Equal(t, http.StatusServiceUnavailable, ierr.code)
				require.Contains(t, ierr.msg, "m: shed at priority level 2 of 2")
				require.True(t, ierr.retryable())
				counted, missed := ierr.missCounts()
				require.True(t, counted && missed, "a shed request is the model's miss: its gpu-lets were too full")
			}
		})
	}

	// With no reserve (scheduler.priority_reserve: 0) the levels change nothing.
	cfg.Scheduler.PriorityReserve = 0
	now := time.Now()
	n.router.update(g, &pb.ExecutorState{AtMonoNs: monoclock.Of(now), FreeAtMonoNs: monoclock.Of(now.Add(24 * time.Millisecond)),
		Models: []*pb.ModelState{{Name: "m"}}})
	_, _, _, ierr := n.dispatchAny(withPriority(context.Background(), 2), []*repository.Model{m}, nil, nil, nil, now.Add(30*time.Millisecond))
	require.Equal(t, reasonExecutorDown, ierr.reason, "routed")
}
