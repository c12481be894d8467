package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/control"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/mps"
)

// cpuSupervisor supervises real executors (this checkout's binary) on one
// core of the CPU.
func cpuSupervisor(t *testing.T) (*supervisor, mps.Device) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts executor processes")
	}
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	s, _ := testSupervisor(t, testbin.Gpuletd(t))
	s.args = []string{"--policy", "deferred", "--log-format", "json", "--onnxruntime-library", lib}
	dev, err := s.devices.Inventory().Device("cpu")
	require.NoError(t, err)
	return s, dev
}

// loadOf loads the ONNX file at path as model name.
func loadOf(name, path string) *pb.LoadModelRequest {
	return &pb.LoadModelRequest{Name: name, Version: 1, Path: path, Platform: "onnxruntime", MaxBatchSize: 4,
		SloUs: 100_000, WarmupBatches: []int32{1}, Latency: []*pb.LatencyPoint{{Batch: 1, Ms: 1}, {Batch: 4, Ms: 2}}}
}

// A model its executor refuses to load (a file ONNX Runtime cannot take,
// memory the device lacks) no longer keeps the other models of its gpu-let
// from serving: the gpu-let starts with them and names the refused one.
// Before, the whole gpu-let failed, and every re-plan tried the same plan
// and failed again.
func TestAGpuletStartsWithoutAModelItsExecutorRefuses(t *testing.T) {
	s, dev := cpuSupervisor(t)
	repo := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 1))
	good := loadOf("lenet5", filepath.Join(repo, "lenet5", "1", "model.onnx"))
	garbage := filepath.Join(repo, "garbage.onnx")
	require.NoError(t, os.WriteFile(garbage, []byte("not an ONNX model"), 0o644))
	bad := loadOf("broken", garbage)
	ctx := context.Background()

	g, err := s.start(ctx, gpuletSpec{device: dev, size: 100}, []*pb.LoadModelRequest{good, bad})
	var notLoaded *control.ModelsNotLoaded
	require.ErrorAs(t, err, &notLoaded)
	require.NotNil(t, g)
	require.Len(t, notLoaded.Errs, 1)
	require.ErrorContains(t, notLoaded.Errs["broken"], "load broken")
	require.Equal(t, []string{"lenet5"}, g.modelNames())
	require.False(t, g.down.Load())
	require.Equal(t, "deferred", g.policy, "the policy its executor was started with")
	h, err := g.client().Health(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"lenet5"}, h.Models, "the executor serves the model that loaded")
	require.NoError(t, s.retire(ctx, g))

	g, err = s.start(ctx, gpuletSpec{device: dev, size: 100}, []*pb.LoadModelRequest{bad})
	require.Error(t, err, "a gpu-let none of whose models loads does not start")
	require.False(t, errors.As(err, &notLoaded))
	require.Nil(t, g)
	require.Empty(t, s.list())
	lease, err := s.lease("again", gpuletSpec{device: dev, size: 100})
	require.NoError(t, err, "its lease is given back")
	lease.Release()
}

// What a gpu-let runs, as the next reorganization sees it: the plan's
// gpu-let it was started for, less the models that did not load, with a
// model loaded later counted once.
func TestPlannedNowFollowsWhatLoaded(t *testing.T) {
	let := gpulet.GPULet{Size: 50, Models: []gpulet.Placement{{Name: "a", Batch: 4, Rate: 10}, {Name: "b", Batch: 2, Rate: 5}}}
	g := &gpuletRun{models: map[string]*pb.LoadModelRequest{"a": {Name: "a"}}}
	g.setPlanned(let)
	require.Equal(t, []gpulet.Placement{let.Models[0]}, g.plannedNow().Models, "b did not load")

	g.models["b"] = &pb.LoadModelRequest{Name: "b"}
	b := gpulet.Placement{Name: "b", Batch: 2, Rate: 7}
	g.plannedAdd(b)
	require.Equal(t, []gpulet.Placement{let.Models[0], b}, g.plannedNow().Models, "b loads later, once")

	g.models["c"] = &pb.LoadModelRequest{Name: "c"}
	c := gpulet.Placement{Name: "c", Batch: 1, Rate: 1}
	g.plannedAdd(c)
	g.plannedDrop("a")
	require.Equal(t, []gpulet.Placement{b, c}, g.plannedNow().Models)
	require.Equal(t, 50, g.plannedNow().Size)
}

// An executor that dies and, started again, cannot load one of its models
// any more (its file was removed meanwhile) serves the others and says which
// it lost. Before, every restart failed whole, and the gpu-let's other
// models stayed down for as long as the file was missing.
func TestARestartedExecutorServesWhatStillLoads(t *testing.T) {
	s, dev := cpuSupervisor(t)
	n := supervisedNode(t, s)
	lost := make(chan map[string]error, 1)
	s.onModelsLost = func(g *gpuletRun, errs map[string]error) {
		n.modelsLost(g, errs)
		lost <- errs
	}
	s.onRestart = n.restartTried
	repo := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5", "mlp"}, 1))
	mlp := filepath.Join(repo, "mlp", "1", "model.onnx")
	ctx := context.Background()
	g, err := s.start(ctx, gpuletSpec{device: dev, size: 100}, []*pb.LoadModelRequest{
		loadOf("lenet5", filepath.Join(repo, "lenet5", "1", "model.onnx")), loadOf("mlp", mlp)})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.retire(ctx, g)) }()
	names := g.modelNames()
	slices.Sort(names)
	require.Equal(t, []string{"lenet5", "mlp"}, names)
	g.setPlanned(gpulet.GPULet{Size: 100, Models: []gpulet.Placement{{Name: "lenet5", Batch: 4, Rate: 1}, {Name: "mlp", Batch: 4, Rate: 1}}})
	n.installRoutes(n.running())
	require.True(t, n.modelReady("mlp"))

	n.unserved.set("lenet5", "its executor died and does not start again") // as a failed try would say
	require.NoError(t, os.Remove(mlp))
	g.mu.Lock()
	p := g.proc
	g.mu.Unlock()
	require.NoError(t, p.Kill())
	var errs map[string]error
	select {
	case errs = <-lost:
	case <-time.After(readyTimeout):
		t.Fatal("the executor was not restarted without mlp")
	}
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs["mlp"], "load mlp")
	require.Equal(t, []string{"lenet5"}, g.modelNames())
	require.False(t, g.down.Load())
	h, err := g.client().Health(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"lenet5"}, h.Models)
	require.True(t, n.modelReady("lenet5"))
	require.False(t, n.modelReady("mlp"), "mlp is not routed to the executor that lost it")
	require.Contains(t, n.notServedReason("mlp"), "restarted without it: load mlp")
	require.Eventually(t, func() bool { return n.notServedReason("lenet5") == "" }, 10*time.Second, 10*time.Millisecond,
		"a model served again has no reason left")
}

// A CPU gpu-let's executor is not told of the GPU provider it would not use
// (`ps` showed --provider cuda on hosts without a GPU).
func TestACPUExecutorGetsNoGPUProvider(t *testing.T) {
	s, dev := cpuSupervisor(t)
	s.args = append(s.args, "--provider", "cuda")
	repo := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 1))
	ctx := context.Background()
	g, err := s.start(ctx, gpuletSpec{device: dev, size: 100}, []*pb.LoadModelRequest{loadOf("lenet5", filepath.Join(repo, "lenet5", "1", "model.onnx"))})
	require.NoError(t, err)
	g.mu.Lock()
	pid := g.proc.Pid()
	g.mu.Unlock()
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	require.NoError(t, err)
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	require.Contains(t, args, "--policy", "the other flags are passed")
	require.NotContains(t, args, "--provider")
	require.NotContains(t, args, "cuda")
	require.NoError(t, s.retire(ctx, g))
}

func TestWithoutFlag(t *testing.T) {
	tests := []struct {
		args, want []string
	}{
		{[]string{"--policy", "deferred", "--provider", "cuda", "--log-level", "info"}, []string{"--policy", "deferred", "--log-level", "info"}},
		{[]string{"--provider", "cuda"}, []string{}},
		{[]string{"--policy", "eager"}, []string{"--policy", "eager"}},
		{[]string{"--policy", "eager", "--provider"}, []string{"--policy", "eager"}}, // no value left
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, withoutFlag(tt.args, "--provider"), "%v", tt.args)
	}
}

// A CPU gpu-let that does not fit beside the old one it replaces (both
// cores held) starts over it: its executor runs on a core the old one
// holds, and keeps that core once the old one has stopped.
func TestAGpuletStartsOverTheCoresOfTheOld(t *testing.T) {
	s, _ := cpuSupervisor(t)
	devices, err := mps.New(mps.Options{Spec: mps.Spec{Mode: mps.ModeCPU}, CPUs: []int{0, 1}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, devices.Close(context.Background())) })
	s.devices = devices
	n := supervisedNode(t, s)
	n.devices = devices
	dev, err := devices.Inventory().Device("cpu")
	require.NoError(t, err)
	repo := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(repo, []string{"lenet5"}, 1))
	ctx := context.Background()

	old, err := s.start(ctx, gpuletSpec{device: dev, size: 100}, []*pb.LoadModelRequest{loadOf("lenet5", filepath.Join(repo, "lenet5", "1", "model.onnx"))})
	require.NoError(t, err)
	require.Equal(t, []int{0, 1}, old.lease.Gpulet().Cores)
	half := gpulet.GPULet{Size: 50}
	gp := &gpulet.GPUPlan{ID: dev.ID, GPULets: []gpulet.GPULet{half}}
	x := executors{n: n}
	_, err = x.Start(ctx, gp, half)
	require.ErrorContains(t, err, "not enough free cores", "beside the old one")

	g, err := x.StartOver(ctx, gp, half, []*gpuletRun{old})
	require.NoError(t, err)
	require.Equal(t, []int{1}, g.lease.Gpulet().Cores, "a core the old one holds")
	_, err = g.client().Health(ctx)
	require.NoError(t, err, "its executor serves")

	require.NoError(t, s.retire(ctx, old))
	next, err := s.lease("next", gpuletSpec{device: dev, size: 50})
	require.NoError(t, err)
	require.Equal(t, []int{0}, next.Gpulet().Cores, "the old one gave back the core it kept")
	next.Release()
	_, err = s.lease("whole", gpuletSpec{device: dev, size: 100})
	require.ErrorContains(t, err, "not enough free cores", "the new one keeps core 1")
	require.NoError(t, s.retire(ctx, g))
}
