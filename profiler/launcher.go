package profiler

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/executor"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/internal/crashlog"
	"github.com/gpulet/gpuletd/mps"
	"go.uber.org/zap"
)

// Leaser reserves what an executor for a gpu-let needs (cores, an MPS client
// slot, a MIG instance) and gives its environment: *mps.Manager.
type Leaser interface {
	Lease(g mps.Gpulet) (*mps.Lease, error)
}

// ProcessLauncher starts real `gpuletd executor` processes with the policy
// BatchPolicy. The executor schedules every row of a request on its own; with
// the eager policy the first row of a request is dispatched alone the moment
// it is queued on an idle gpu-let, so a request of b rows does not run as
// one batch. A timeout policy waits its timeout after the first row, by
// which time every row of the request is queued, and then runs the largest
// batch: the b rows together. The wait is queueing time, outside the engine
// time the profiler samples.
type ProcessLauncher struct {
	// Devices leases the gpu-lets.
	Devices Leaser
	// Binary is the gpuletd binary; empty: this process's own executable.
	Binary string
	// SocketDir holds the executors' Unix sockets (keep the path short:
	// socket paths are limited to about 100 bytes).
	SocketDir string
	// Library is the ONNX Runtime library the executors load; empty: they
	// search for it.
	Library string
	// Policy is the executors' --policy (default BatchPolicy).
	Policy string
	// Provider is the executors' --provider on NVIDIA gpu-lets (cuda or
	// tensorrt); empty: the executor's default.
	Provider string
	// Env is added to every executor's environment (LD_LIBRARY_PATH for
	// the CUDA libraries).
	Env []string
	// ReadyTimeout bounds the wait for a new executor to answer (default
	// 60 s).
	ReadyTimeout time.Duration
	// Log receives launch and stop events; nil: none.
	Log *zap.Logger
	// Shared leases the gpu-lets without taking their CPU cores from the
	// serving gpu-lets that hold them (mps.Gpulet.Shared): a profile
	// measured while the node serves.
	Shared bool
}

// Launch implements Launcher.
func (l *ProcessLauncher) Launch(ctx context.Context, g mps.Gpulet) (Executor, error) {
	log := l.Log
	if log == nil {
		log = zap.NewNop()
	}
	g.Shared = g.Shared || l.Shared
	lease, err := l.Devices.Lease(g)
	if err != nil {
		return nil, fmt.Errorf("launch executor for %s: %w", g.ID, err)
	}
	policy := l.Policy
	if policy == "" {
		policy = BatchPolicy
	}
	// --expendable: on a host short of memory the kernel kills this
	// executor, which only measures, before any that serves.
	args := []string{"--policy", policy, "--log-format", "json", "--expendable"}
	if l.Library != "" {
		args = append(args, "--onnxruntime-library", l.Library)
	}
	if l.Provider != "" {
		args = append(args, "--provider", l.Provider)
	}
	logs := crashlog.NewTail(16 << 10)
	p, err := executor.Spawn(executor.SpawnOptions{
		Binary: l.Binary, Socket: filepath.Join(l.SocketDir, g.ID+".sock"),
		Env: append(lease.Env(), l.Env...), Args: args, Output: logs,
	})
	if err != nil {
		lease.Release()
		return nil, fmt.Errorf("launch executor for %s: %w", g.ID, err)
	}
	x := &processExecutor{p: p, lease: lease, logs: logs}
	timeout := l.ReadyTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := p.WaitReady(rctx); err != nil {
		_ = x.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("launch executor for %s: %w", g.ID, ctx.Err())
		}
		return nil, fmt.Errorf("launch executor for %s: %w: %v%s", g.ID, ErrDeviceLost, err, logTail(logs.String()))
	}
	log.Debug("executor started", zap.String("gpulet", g.ID), zap.Int("pid", p.Pid()))
	return x, nil
}

// BatchPolicy is the executor policy under which a request of b rows runs
// as one batch of b rows (see ProcessLauncher).
const BatchPolicy = "timeout:1ms"

// processExecutor is a `gpuletd executor` process holding a lease.
type processExecutor struct {
	p     *executor.Process
	lease *mps.Lease
	logs  *crashlog.Tail
	once  sync.Once
	err   error
}

func (x *processExecutor) Health(ctx context.Context) (*pb.HealthResponse, error) {
	return x.p.Client.Health(ctx)
}

func (x *processExecutor) LoadModel(ctx context.Context, req *pb.LoadModelRequest) (*pb.LoadModelResponse, error) {
	return x.p.Client.LoadModel(ctx, req)
}

func (x *processExecutor) Infer(ctx context.Context, req *pb.InferRequest) (*pb.InferResponse, error) {
	return x.p.Client.Infer(ctx, req)
}

func (x *processExecutor) Done() <-chan struct{} { return x.p.Done() }
func (x *processExecutor) ExitErr() error        { return x.p.ExitErr() }
func (x *processExecutor) Logs() string          { return x.logs.String() }

// Close stops the process (SIGTERM, then SIGKILL after 10 s) and releases
// the lease; later calls return the first result.
func (x *processExecutor) Close() error {
	x.once.Do(func() {
		select {
		case <-x.p.Done():
			if x.p.Client != nil {
				_ = x.p.Client.Close()
			}
		default:
			x.err = x.p.Stop(10 * time.Second)
		}
		x.lease.Release()
	})
	return x.err
}

// crashedTail starts logTail's words for an executor whose log holds a
// crash report.
const crashedTail = "; executor crashed: "

// logTail formats the last few lines of an executor's log for an error
// message, or the headline of the crash report it holds (whose last lines
// are registers); "" when there are none.
func logTail(logs string) string {
	if h := crashlog.Headline(logs); h != "" {
		return crashedTail + h
	}
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return "; executor log: " + strings.Join(lines, " | ")
}

// exitReason describes how an executor ended, waiting up to wait for it to
// exit; "" when it is still running.
func exitReason(x Executor, wait time.Duration) string {
	select {
	case <-x.Done():
	case <-time.After(wait):
		return ""
	}
	if err := x.ExitErr(); err != nil {
		return "executor exited: " + err.Error()
	}
	return "executor exited"
}
