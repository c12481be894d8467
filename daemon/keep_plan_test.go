package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
)

// planOfANode is a node whose plan in force, made by gpulet-int, places
// model a at 120 req/s on a whole emu0, configured for the planner algo,
// with that gpu-let running or not.
func planOfANode(algo string, running bool) *node {
	let := gpulet.GPULet{Size: 100, Models: []gpulet.Placement{{Name: "a", Batch: 8, Rate: 120}}}
	plan := &gpulet.Plan{Algo: gpulet.AlgoGpuletInt, GPUs: []gpulet.GPUPlan{{ID: "emu0", GPULets: []gpulet.GPULet{let}}}}
	conf := config.Default()
	conf.Scheduler.Algorithm = algo
	n := &node{log: zap.NewNop(), sup: &supervisor{running: map[string]*gpuletRun{}}, catalog: &catalog{}}
	n.cfg.Store(&conf)
	n.current.Store(&planned{plan: plan})
	if running {
		n.sup.running["x1"] = &gpuletRun{device: mps.Device{ID: "emu0"}, planned: let,
			models: map[string]*pb.LoadModelRequest{"a": {Name: "a"}}}
	}
	return n
}

// A period leaves the node as it is while the plan in force places every
// estimate, runs whole and is the configured planner's; it re-plans once a
// model outgrows its place, a gpu-let the plan has does not run, the
// planner was changed by a reload, or a pipeline is served.
func TestPeriodKeepsAPlanThatServesTheEstimates(t *testing.T) {
	steady := map[string]float64{"a": 110}
	require.True(t, planOfANode(string(gpulet.AlgoGpuletInt), true).keepPlan(steady, nil))
	require.False(t, planOfANode(string(gpulet.AlgoGpuletInt), true).keepPlan(map[string]float64{"a": 100}, map[string]float64{"a": 130}), "a's period outgrew its place")
	require.False(t, planOfANode(string(gpulet.AlgoGpuletInt), false).keepPlan(steady, nil), "its gpu-let does not run")
	require.False(t, planOfANode(string(gpulet.AlgoSBP), true).keepPlan(steady, nil), "a reload changed the planner")
	n := planOfANode(string(gpulet.AlgoGpuletInt), true)
	n.catalog.pipelines = map[string]*repository.Model{"p": {Name: "p"}}
	require.False(t, n.keepPlan(steady, nil), "a pipeline is served")
	n = planOfANode(string(gpulet.AlgoGpuletInt), true)
	n.current.Store(nil)
	require.False(t, n.keepPlan(steady, nil), "no plan yet")
}
