package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// TestFloodOnOneModelSparesTheOthers floods resnet18 on the CPU device at
// 60 req/s, about what the node can serve of it by its profile and 3× what
// this machine sustains with its own clients running, while mlp gets
// light traffic: the planner keeps mlp's place (the planner alone would
// give every core to resnet18), mlp is answered, and resnet18's excess is
// refused for resnet18 only.
func TestFloodOnOneModelSparesTheOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"mlp", "resnet18"}, 1))
	// A generous SLO for the probes: the point is that mlp keeps a place and
	// its turns, not its latency on a two-core test machine whose cores
	// also run this test's clients (batches there run well past their
	// profile, which the plan cannot know).
	setProfile(t, repo, "mlp", "alexnet", "400ms")
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_DEVICES=cpu"))
	base := "http://" + addr
	require.Eventually(t, func() bool {
		return do(t, "GET", base+"/v2/models/mlp/ready", nil, nil).code == 200 &&
			do(t, "GET", base+"/v2/models/resnet18/ready", nil, nil).code == 200
	}, 3*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)

	// Open-loop loads as `gpuletd load` sends them: the flood from the
	// start, the probes once the node has re-planned for it.
	load := func(model string, rate float64, after, d time.Duration) <-chan loadResult {
		out := make(chan loadResult, 1)
		go func() {
			time.Sleep(after)
			rep, err := loadgen.Run(context.Background(), loadgen.Config{URL: base, Model: model, Rate: rate,
				Duration: d, Seed: 1, Binary: true, Concurrency: 64, Drain: 5 * time.Second})
			out <- loadResult{rep, err}
		}()
		return out
	}
	// 90 req/s is past what resnet18 serves on a two-core machine (47 to
	// 59 req/s measured beside other tests; at 60 req/s on an idle machine
	// it served all of them, and no excess was left to refuse).
	floodDone := load("resnet18", 90, 0, 33*time.Second)
	probesDone := load("mlp", 10, 8*time.Second, 25*time.Second)
	flood, probes := <-floodDone, <-probesDone
	require.NoError(t, flood.err)
	require.NoError(t, probes.err)

	require.Greater(t, probes.rep.Sent, int64(150))
	ev := do(t, "GET", base+"/api/v1/events?limit=1000", nil, nil)
	// Before the fair share the flood took mlp's gpu-let and 80% of the
	// probes were refused; what is left now comes from re-plans that move
	// the CPU's cores (a model waits while its gpu-lets swap) and from
	// this test's clients running on the same two cores (about 95% answered
	// here alone; 77% once in CI beside other packages' tests, hence 70%).
	require.GreaterOrEqual(t, float64(probes.rep.OK), 0.70*float64(probes.rep.Sent),
		"mlp is answered during resnet18's flood: %d of %d, %v (%s); events:\n%s",
		probes.rep.OK, probes.rep.Sent, probes.rep.Failed, probes.rep.FirstError, ev.body)
	refused := int64(0)
	for code, n := range flood.rep.Failed {
		if strings.HasPrefix(code, "503") { // with gpuletd's reason: "503 over_share", "503 deadline"
			refused += n
		}
	}
	require.Positive(t, refused, "resnet18's excess is refused: %v", flood.rep.Failed)
	require.Positive(t, flood.rep.OK, "resnet18 keeps its share")
	placed := false
	for _, g := range getStatus(t, base).Gpulets {
		for _, m := range g.Models {
			placed = placed || m.Name == "mlp"
		}
	}
	require.True(t, placed, "mlp keeps a gpu-let")
	// Whether the planner itself sees the flood as overload depends on how
	// fast the quick profile measured resnet18 on this loaded machine (47
	// to 59 req/s over runs); control's tests cover the fair share, this
	// test what the node does either way.
}

// loadResult is one loadgen run's outcome.
type loadResult struct {
	rep *loadgen.Report
	err error
}
