package profiler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/gpulet/gpuletd/executor"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/mps"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fakeLauncher starts fakeExecutors whose batches take
// (alpha·b + beta)·100/size ms, times colocFactor while another executor of
// the launcher is alive, with ±1% noise. They answer at once: the profiler
// samples the reported engine time, not the wall clock.
type fakeLauncher struct {
	alpha, beta float64
	colocFactor float64
	loadErr     string // LoadModel fails with this
	dieAfter    int    // the executor dies at this Infer call (0: never)
	onInfer     func(n int)
	noPeak      bool // Health reports no peak resident memory

	mu       sync.Mutex
	alive    int
	launches []mps.Gpulet
	infers   int
	warmed   [][]int32 // each load's warm-up batches
}

func (f *fakeLauncher) Launch(_ context.Context, g mps.Gpulet) (Executor, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.alive++
	f.launches = append(f.launches, g)
	return &fakeExecutor{f: f, g: g, done: make(chan struct{}), rng: rand.New(rand.NewPCG(uint64(g.Size), 1))}, nil
}

func (f *fakeLauncher) launched() []mps.Gpulet {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]mps.Gpulet(nil), f.launches...)
}

// warmedAtLoad returns each load's warm-up batches, in order.
func (f *fakeLauncher) warmedAtLoad() [][]int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.warmed)
}

// latency is the noiseless solo latency of the fake model.
func (f *fakeLauncher) latency(b, size int) float64 {
	return (f.alpha*float64(b) + f.beta) * 100 / float64(size)
}

type fakeExecutor struct {
	f    *fakeLauncher
	g    mps.Gpulet
	done chan struct{}

	mu     sync.Mutex
	rng    *rand.Rand
	closed bool
	dead   bool
}

func (x *fakeExecutor) Health(context.Context) (*pb.HealthResponse, error) {
	h := &pb.HealthResponse{Serving: true, Engine: "fake", SizePercent: int32(x.g.Size), Threads: 1, CpuCores: []int32{0}}
	if !x.f.noPeak {
		h.PeakResidentBytes = x.f.peakMB(x.g.Size) << 20
	}
	return h, nil
}

// peakMB is the fake executor's peak resident memory at a size: 100 MiB
// and one more per percent.
func (f *fakeLauncher) peakMB(size int) int64 { return 100 + int64(size) }

func (x *fakeExecutor) LoadModel(_ context.Context, req *pb.LoadModelRequest) (*pb.LoadModelResponse, error) {
	if x.f.loadErr != "" {
		return nil, status.Error(codes.InvalidArgument, x.f.loadErr)
	}
	if req.SloUs <= 0 || len(req.WarmupBatches) == 0 {
		return nil, status.Error(codes.InvalidArgument, "bad load request")
	}
	x.f.mu.Lock()
	x.f.warmed = append(x.f.warmed, req.WarmupBatches)
	x.f.mu.Unlock()
	return &pb.LoadModelResponse{Inputs: []*pb.TensorSpec{{Name: "input", Datatype: "FP32", Shape: []int64{1, 4, 4}}}}, nil
}

func (x *fakeExecutor) Infer(ctx context.Context, req *pb.InferRequest) (*pb.InferResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x.f.mu.Lock()
	x.f.infers++
	n, alive, hook := x.f.infers, x.f.alive, x.f.onInfer
	x.f.mu.Unlock()
	if hook != nil {
		hook(n)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.dead || (x.f.dieAfter > 0 && n >= x.f.dieAfter) {
		if !x.dead {
			x.dead = true
			close(x.done)
		}
		return nil, fmt.Errorf("receive: %w: stream closed", executor.ErrExecutorGone)
	}
	rows := int(req.Inputs[0].Shape[0])
	ms := x.f.latency(rows, x.g.Size) * (1 + 0.01*(2*x.rng.Float64()-1))
	if alive > 1 && x.f.colocFactor > 0 {
		ms *= x.f.colocFactor
	}
	return &pb.InferResponse{Id: req.Id, BatchSize: int32(rows), ComputeUs: int64(ms * 1000)}, nil
}

func (x *fakeExecutor) Done() <-chan struct{} { return x.done }

func (x *fakeExecutor) ExitErr() error {
	select {
	case <-x.done:
		return errors.New("signal: killed")
	default:
		return nil
	}
}

func (x *fakeExecutor) Logs() string { return `{"level":"info","msg":"executor serving"}` }

func (x *fakeExecutor) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	x.closed = true
	x.f.mu.Lock()
	x.f.alive--
	x.f.mu.Unlock()
	return nil
}
