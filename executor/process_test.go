package executor

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/testbin"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/mps/execenv"
	"github.com/stretchr/testify/require"
)

// startExecutor runs `gpuletd executor` on a CPU gpu-let as the daemon would.
func startExecutor(t *testing.T, policy string) (*Client, *exec.Cmd) {
	t.Helper()
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	sock := filepath.Join(t.TempDir(), "ex.sock")
	cmd := exec.Command(testbin.Gpuletd(t), "executor", "--socket", sock, "--policy", policy, "--onnxruntime-library", lib, "--log-format", "console")
	env := execenv.Env{DeviceID: "cpu", Kind: execenv.KindCPU, Type: "cpu", Partition: execenv.PartitionCPU, Size: 100, Cores: []int{0}, IntraOpThreads: 1}
	cmd.Env = append(os.Environ(), env.Encode()...)
	logs := &syncBuf{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	c, err := Dial(sock)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = c.Close()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("executor logs:\n%s", logs.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.WaitReady(ctx)
	require.NoError(t, err, "executor logs:\n%s", logs.String())
	return c, cmd
}

type syncBuf struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

func zooRepo(t *testing.T, models ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(dir, models, 7))
	return dir
}

func TestProcessServesTwoModelsLikeONNXRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("starts executor processes")
	}
	repo := zooRepo(t, "lenet5", "mlp")
	c, _ := startExecutor(t, "deferred")
	ctx := context.Background()
	shapes := map[string][]int64{"lenet5": {1, 1, 28, 28}, "mlp": {1, 784}}
	for name := range shapes {
		_, err := c.LoadModel(ctx, &pb.LoadModelRequest{
			Name: name, Path: filepath.Join(repo, name, "1", "model.onnx"), MaxBatchSize: 16,
			SloUs: (100 * time.Millisecond).Microseconds(), WarmupBatches: []int32{1, 4, 16},
		})
		require.NoError(t, err)
	}
	h, err := c.Health(ctx)
	require.NoError(t, err)
	require.Equal(t, "onnxruntime", h.Engine)
	require.Equal(t, []int32{0}, h.CpuCores)
	require.ElementsMatch(t, []string{"lenet5", "mlp"}, h.Models)

	require.NoError(t, onnxrt.Init(mustLib(t)))
	type result struct {
		name   string
		input  []float32
		output []float32
	}
	const n = 48
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "lenet5"
			if i%2 == 1 {
				name = "mlp"
			}
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			shape := shapes[name]
			n, err := tensor.NumElements(shape)
			require.NoError(t, err)
			vals := make([]float32, n)
			for k := range vals {
				vals[k] = rng.Float32()
			}
			x, err := tensor.FromFloat32s("input", shape, vals)
			require.NoError(t, err)
			resp, err := c.Infer(ctx, &pb.InferRequest{Model: name, Inputs: toProto([]tensor.Tensor{x})})
			require.NoError(t, err)
			require.Equal(t, pb.Code_OK, resp.Code, resp.Error)
			results[i] = result{name: name, input: vals, output: outVals(t, resp, "output")}
		}()
	}
	wg.Wait()

	for _, r := range results {
		want, err := onnxrt.RunFloat32(filepath.Join(repo, r.name, "1", "model.onnx"),
			map[string]onnxrt.Float32Tensor{"input": {Shape: shapes[r.name], Data: r.input}}, 1)
		require.NoError(t, err)
		got := want["output"].Data
		require.Len(t, r.output, len(got))
		for k := range got {
			require.InDelta(t, got[k], r.output[k], 1e-4*math.Max(1, math.Abs(float64(got[k]))))
		}
	}
	st, err := c.Stats(ctx)
	require.NoError(t, err)
	batched := false
	for _, m := range st.Models {
		require.Equal(t, int64(n/2), m.Succeeded, m.Name)
		for size := range m.BatchSizes {
			if size > 1 {
				batched = true
			}
		}
	}
	require.True(t, batched, "concurrent requests form batches larger than 1: %v", st.Models)
}

func mustLib(t *testing.T) string {
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	return lib
}

func TestKilledExecutorFailsCallsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("starts executor processes")
	}
	repo := zooRepo(t, "resnet18")
	c, cmd := startExecutor(t, "eager")
	ctx := context.Background()
	_, err := c.LoadModel(ctx, &pb.LoadModelRequest{
		Name: "resnet18", Path: filepath.Join(repo, "resnet18", "1", "model.onnx"), MaxBatchSize: 4,
		SloUs: (60 * time.Second).Microseconds(), WarmupBatches: []int32{1},
	})
	require.NoError(t, err)
	x, err := tensor.Zeros("input", tensor.FP32, []int64{1, 3, 224, 224})
	require.NoError(t, err)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := c.Infer(ctx, &pb.InferRequest{Model: "resnet18", Inputs: toProto([]tensor.Tensor{x})})
			errs <- err
		}()
	}
	time.Sleep(200 * time.Millisecond) // requests are queued and one batch runs
	require.NoError(t, cmd.Process.Kill())
	for range 8 {
		select {
		case err := <-errs:
			if err != nil {
				require.ErrorIs(t, err, ErrExecutorGone)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a call hung after the executor was killed")
		}
	}
	_, err = c.Infer(ctx, &pb.InferRequest{Model: "resnet18", Inputs: toProto([]tensor.Tensor{x})})
	require.ErrorIs(t, err, ErrExecutorGone, "later calls fail at once")
	require.ErrorIs(t, err, ErrNotSent, "and say they were not sent")
}

func TestKilledExecutorLeavesNoSocket(t *testing.T) {
	if testing.Short() {
		t.Skip("starts executor processes")
	}
	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	sock := filepath.Join(t.TempDir(), "x.sock")
	env := execenv.Env{DeviceID: "cpu", Kind: execenv.KindCPU, Type: "cpu", Partition: execenv.PartitionCPU, Size: 100, Cores: []int{0}, IntraOpThreads: 1}
	p, err := Spawn(SpawnOptions{Binary: testbin.Gpuletd(t), Socket: sock, Env: env.Encode(), Args: []string{"--onnxruntime-library", lib}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, p.WaitReady(ctx))
	require.FileExists(t, sock)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.Done()
	require.NoFileExists(t, sock, "the daemon removes a killed executor's socket")
	_ = p.Client.Close()
}

// An executor raises its out-of-memory score adjustment over the daemon's,
// so that the kernel kills it, not the daemon, when memory runs out.
func TestExecutorVolunteersForTheOOMKiller(t *testing.T) {
	if testing.Short() {
		t.Skip("starts executor processes")
	}
	b, err := os.ReadFile(oomScoreAdjPath)
	if err != nil {
		t.Skipf("no oom_score_adj here: %v", err)
	}
	mine, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	sock := filepath.Join(t.TempDir(), "x.sock")
	env := execenv.Env{DeviceID: "emu0", Kind: execenv.KindEmulated, Emulated: "v100", Type: "v100", Partition: execenv.PartitionMPS, Size: 50}
	p, err := Spawn(SpawnOptions{Binary: testbin.Gpuletd(t), Socket: sock, Env: env.Encode()})
	require.NoError(t, err)
	defer func() { _ = p.Kill() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, p.WaitReady(ctx))
	b, err = os.ReadFile(fmt.Sprintf("/proc/%d/oom_score_adj", p.cmd.Process.Pid))
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(min(1000, mine+oomScoreRaise)), strings.TrimSpace(string(b)))

	// A profile job's executor (--expendable) goes before the serving ones.
	sock2 := filepath.Join(t.TempDir(), "y.sock")
	q, err := Spawn(SpawnOptions{Binary: testbin.Gpuletd(t), Socket: sock2, Env: env.Encode(), Args: []string{"--expendable"}})
	require.NoError(t, err)
	defer func() { _ = q.Kill() }()
	require.NoError(t, q.WaitReady(ctx))
	b, err = os.ReadFile(fmt.Sprintf("/proc/%d/oom_score_adj", q.cmd.Process.Pid))
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(min(1000, mine+oomScoreRaiseExpendable)), strings.TrimSpace(string(b)))
}

func TestVolunteerForOOM(t *testing.T) {
	for _, tc := range []struct {
		was   string
		raise int
		want  string
	}{
		{"0", oomScoreRaise, "500"}, {"-900", oomScoreRaise, "-400"}, {"700", oomScoreRaise, "1000"}, {"1000", oomScoreRaise, "1000"},
		{"0", oomScoreRaiseExpendable, "1000"}, {"-900", oomScoreRaiseExpendable, "100"},
	} {
		f := filepath.Join(t.TempDir(), "oom_score_adj")
		require.NoError(t, os.WriteFile(f, []byte(tc.was+"\n"), 0o644))
		n, err := volunteerForOOM(f, tc.raise)
		require.NoError(t, err)
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.Equal(t, tc.want, string(b))
		require.Equal(t, tc.want, strconv.Itoa(n))
	}
	_, err := volunteerForOOM(filepath.Join(t.TempDir(), "none"), oomScoreRaise)
	require.ErrorContains(t, err, "read oom_score_adj")
}

// An executor's hang floor is the daemon's when given, else 5 s on the
// CPU and 30 s on a GPU (a first run of a batch size may tune kernels for
// seconds), an emulated one included.
func TestHangFloorByDevice(t *testing.T) {
	require.Equal(t, 2*time.Second, HangFloor(2*time.Second, execenv.KindNVIDIA))
	require.Equal(t, DefaultHangFloor, HangFloor(0, execenv.KindNVIDIA))
	require.Equal(t, DefaultHangFloorCPU, HangFloor(0, execenv.KindCPU))
	require.Equal(t, DefaultHangFloor, HangFloor(0, execenv.KindEmulated))
}
