package daemon

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/profiler/store"
)

// A reload's scheduling policy and queue bound reach the executors already
// running, in place: the executor switches its policy and its models are
// retuned with the new bound, the process untouched. Before, both reached
// only executors started later, so a policy change waited for a re-plan that
// happened to replace the gpu-let. An executor that refuses is named in an
// event, and its gpu-let keeps its old policy in the status.
func TestAReloadReachesTheRunningExecutors(t *testing.T) {
	s, dev := cpuSupervisor(t)
	repo := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 1))
	ctx := context.Background()
	g, err := s.start(ctx, gpuletSpec{device: dev, size: 100}, []*pb.LoadModelRequest{loadOf("lenet5", filepath.Join(repo, "lenet5", "1", "model.onnx"))})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.retire(ctx, g)) }()
	n := supervisedNode(t, s)
	pid := g.proc.Pid()
	require.Equal(t, "deferred", g.policy)

	cfg := config.Default()
	cfg.Scheduler.Policy, cfg.Limits.MaxQueuedPerModel = "eager", 7
	n.cfg.Store(&cfg)
	n.applyToExecutors(ctx)
	require.Equal(t, "eager", g.policy)
	require.EqualValues(t, 7, g.models["lenet5"].MaxQueue)
	require.Equal(t, pid, g.proc.Pid(), "switched in place, not restarted")
	// A model's own bound (Triton's max_queue_size) below the server's.
	n.catalog.models["lenet5"] = &repository.Model{Name: "lenet5", Family: "lenet5", Config: repository.ModelConfig{MaxQueue: 3}}
	n.applyToExecutors(ctx)
	require.EqualValues(t, 3, g.models["lenet5"].MaxQueue, "the model's own bound")
	h, err := g.client().Health(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"lenet5"}, h.Models)
	evs, err := s.events.st.Events(ctx, 0, 0)
	require.NoError(t, err)
	started := len(evs) // the executor's start

	cfg.Scheduler.Policy = "sometimes" // what the executor refuses
	n.cfg.Store(&cfg)
	n.applyToExecutors(ctx)
	require.Equal(t, "eager", g.policy, "the status keeps the policy it runs")
	evs, err = s.events.st.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, started+1, "one event, for the refusal")
	last := evs[len(evs)-1]
	require.Equal(t, EventConfigReload, last.Kind)
	require.Equal(t, store.SeverityWarning, last.Severity)
	require.Contains(t, last.Message, g.id+" stays on policy eager")
}

// A model's queue bound is its own max_queue where that is below the
// server's limits.max_queued_per_model, else the server's.
func TestQueueBound(t *testing.T) {
	for _, tc := range []struct{ own, server, want int }{
		{0, 4096, 4096}, {8, 4096, 8}, {8000, 4096, 4096}, {4096, 4096, 4096},
	} {
		m := &repository.Model{Config: repository.ModelConfig{MaxQueue: tc.own}}
		require.EqualValues(t, tc.want, queueBound(m, tc.server), "own %d, server %d", tc.own, tc.server)
	}
}
