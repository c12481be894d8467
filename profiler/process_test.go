package profiler

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/stretchr/testify/require"
)

// realCPU returns a CPU device of two cores with its manager and a launcher
// of real executors.
func realCPU(t *testing.T) (mps.Device, *ProcessLauncher) {
	t.Helper()
	m, err := mps.New(mps.Options{Spec: mps.Spec{Mode: mps.ModeCPU}, CPUs: []int{0, 1}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	d, err := m.Inventory().Device("cpu")
	require.NoError(t, err)
	sockets, err := os.MkdirTemp("", "gpuletd-profiler-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(sockets) })
	return d, &ProcessLauncher{Devices: m, Binary: testbin.Gpuletd(t), SocketDir: sockets, Library: lib}
}

// zooModel writes a zoo model and describes it for a job.
func zooModel(t *testing.T, name string) Model {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(dir, []string{name}, 1))
	path := filepath.Join(dir, name, "1", "model.onnx")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return Model{Name: name, Path: path, SHA256: shaOf(string(b)), SLOMS: 5, MaxBatchSize: 32}
}

// killingLauncher kills an executor's process at the after-th request.
type killingLauncher struct {
	inner *ProcessLauncher
	after int64
	n     atomic.Int64
}

func (k *killingLauncher) Launch(ctx context.Context, g mps.Gpulet) (Executor, error) {
	x, err := k.inner.Launch(ctx, g)
	if err != nil {
		return nil, err
	}
	return &killingExecutor{Executor: x, k: k}, nil
}

type killingExecutor struct {
	Executor
	k *killingLauncher
}

func (x *killingExecutor) Infer(ctx context.Context, req *pb.InferRequest) (*pb.InferResponse, error) {
	if x.k.n.Add(1) == x.k.after {
		pid := x.Executor.(*processExecutor).p.Pid()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return nil, err
		}
	}
	return x.Executor.Infer(ctx, req)
}

func TestRealExecutorsLeNetAndCoLocation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpuletd and starts executors")
	}
	d, l := realCPU(t)
	st := openStore(t)
	job := Job{Model: zooModel(t, "lenet5"), Device: d, Batches: []int{1, 4}, Pairs: true, Store: st, Launcher: l,
		Rule: StopRule{Warmup: 2, MinSamples: 20, MaxSamples: 200}}
	res, err := Measure(context.Background(), job)
	require.NoError(t, err)
	require.Len(t, res.Points, 4)
	require.Len(t, res.Executors, 2)
	require.Equal(t, 1, res.Executors[0].Threads, "50% of two cores is one core")
	require.Len(t, res.Executors[0].Cores, 1)
	require.Equal(t, []int{0, 1}, res.Executors[1].Cores)
	for _, x := range res.Executors {
		require.Positive(t, x.StartMS, "executor start time")
		require.Positive(t, x.LoadMS, "model load time")
		require.Positive(t, x.WarmupMS, "warm-up time")
		require.Positive(t, x.PeakResidentMB, "peak resident memory")
	}
	mem, err := st.ModelMemory(context.Background(), job.Model.SHA256, "cpu")
	require.NoError(t, err)
	// The store keeps the size whose model memory (its peak less the
	// executor's own) is the largest, which need not be the larger peak,
	// and the result says the same.
	require.Contains(t, []float64{res.Executors[0].PeakResidentMB, res.Executors[1].PeakResidentMB}, mem.ResidentMB)
	require.Equal(t, mem.ResidentMB, res.ResidentMB)
	require.Positive(t, mem.ExecutorMB, "the executor's own memory, before it loaded the model")
	require.Less(t, mem.ExecutorMB, mem.ResidentMB)
	require.Equal(t, mem.ExecutorMB, res.ExecutorMB)
	for _, p := range res.Points {
		require.True(t, p.Complete)
		require.Positive(t, p.P50MS)
	}
	// 50/50 with the grid {1, 4}, mirror images left out: (1,1), (1,4), (4,4).
	require.Len(t, res.Pairs, 3)
	for _, p := range res.Pairs {
		require.Positive(t, p.ColocAMS)
		require.Positive(t, float64(p.SoloAMS))
	}
	runs, err := st.Runs(context.Background(), job.Model.SHA256, "cpu", 0)
	require.NoError(t, err)
	require.Equal(t, store.RunComplete, runs[0].Status)
}

func TestRealExecutorKilledMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpuletd and starts executors")
	}
	d, l := realCPU(t)
	st := openStore(t)
	m := zooModel(t, "lenet5")
	k := &killingLauncher{inner: l, after: 40}
	job := Job{Model: m, Device: d, Sizes: []int{50}, Batches: []int{1, 2}, Store: st, Launcher: k,
		Rule: StopRule{Warmup: 2, MinSamples: 30, MaxSamples: 30}}
	_, err := Measure(context.Background(), job)
	require.ErrorIs(t, err, ErrDeviceLost)
	require.Contains(t, err.Error(), "profile lenet5 on cpu at 50%: run batch 2")
	require.Contains(t, err.Error(), "signal: killed")

	runs, err := st.Runs(context.Background(), m.SHA256, "cpu", 0)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Equal(t, store.RunFailed, runs[0].Status)
	pts, err := st.Latency(context.Background(), m.SHA256, "cpu")
	require.NoError(t, err)
	require.Len(t, pts, 2)
	require.True(t, pts[0].Complete, "batch 1 finished before the kill")
	require.False(t, pts[1].Complete, "batch 2 was cut short")
	require.Equal(t, 5, pts[1].Samples, "requests 35..39 of batch 2 (after 2 warm-up runs) before the kill at the 40th")
}
