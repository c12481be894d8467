package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/internal/monoclock"
	"github.com/gpulet/gpuletd/internal/version"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DeviceInfo is what the executor knows of its gpu-let from its environment.
type DeviceInfo struct {
	Kind  string // cpu | nvidia | emulated
	Name  string
	Size  int // percent of the device
	Cores []int
}

// Options configure a Server.
type Options struct {
	Runtime  Runtime
	Policy   sched.Policy // nil: deferred
	MaxQueue int          // per model; 0: sched.DefaultMaxQueue
	Device   DeviceInfo
	Log      *zap.Logger
	// TimerSlack is the least time the loop wakes early for a scheduler
	// timer (see loop.rearm; it grows with observed lateness); 0:
	// DefaultTimerSlack.
	TimerSlack time.Duration
	// OneRunThread runs every batch on one operating-system thread, for
	// engines that keep state per thread that runs a model (ONNX Runtime's
	// CUDA provider; see loop.worker). It costs each batch a hand-over to
	// that thread: about 60 µs at p50 on a 2-core VM (gpuletd bench hop).
	OneRunThread bool
	// DeviceCheck, when set, is asked after a batch's run failed, and at
	// each health check while no batch runs, whether the device can still
	// run work in this process: nil when it can, else why not (see
	// ErrDeviceFault). It may be called from two goroutines at once.
	// Executors with one also take a batch that runs past its hang limit
	// for a device fault.
	DeviceCheck func() error
	// HangFloor is the least time a batch runs before it counts as hung
	// (HangFactor times its planned time, and at least this); 0:
	// DefaultHangFloor.
	HangFloor time.Duration
	// Running, when set, is told which requests each run holds (see
	// RunningFile).
	Running *RunningFile
}

// DefaultTimerSlack is the least the loop wakes early for a deferred
// batch: its timers (internal/hrtimer) fire 40–90 µs late at p50 on an idle
// 2-core VM, and the slack grows past the floor with the lateness it sees.
// With the runtime's timers, late by up to a millisecond, the floor was
// 1 ms and the slack settled at 1.0–1.2 ms; at 200 µs on hrtimer it settles
// at 0.2–0.3 ms, and batches that wait the longer grew from 5.0–5.1 to
// 6.4–7.1 requests at 3 000 req/s (ℓ(b) = 1 + 0.05·b ms, SLO 10 ms;
// BenchmarkDeferredBatches, docs/BENCHMARKS.md "Timers").
const DefaultTimerSlack = 200 * time.Microsecond

// Server is the executor's gRPC service: one gpu-let, its models, its
// scheduling loop and its engine worker.
type Server struct {
	pb.UnimplementedExecutorServer

	opts  Options
	log   *zap.Logger
	clock *sched.RealClock

	mu     sync.RWMutex
	byName map[string]*modelEntry

	loop *loop
	// faults carries a device fault from the loop to Serve.
	faults chan error
}

// NewServer builds a server and starts its scheduling loop; Close stops it.
func NewServer(opts Options) (*Server, error) {
	if opts.Runtime == nil {
		return nil, errors.New("new executor server: no runtime")
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.TimerSlack <= 0 {
		opts.TimerSlack = DefaultTimerSlack
	}
	if opts.HangFloor <= 0 {
		opts.HangFloor = DefaultHangFloor
	}
	s := &Server{opts: opts, log: opts.Log, byName: map[string]*modelEntry{}, faults: make(chan error, 1)}
	s.clock = sched.NewRealClock()
	l, err := newLoop(s)
	if err != nil {
		return nil, err
	}
	s.loop = l
	return s, nil
}

// Close stops the loop, answers whatever is still queued with UNAVAILABLE and
// closes the models and the runtime.
func (s *Server) Close() error {
	s.loop.close()
	s.mu.Lock()
	models := s.byName
	s.byName = map[string]*modelEntry{}
	s.mu.Unlock()
	var errs []error
	for _, m := range models {
		errs = append(errs, m.rt.Close())
	}
	errs = append(errs, s.opts.Runtime.Close())
	return errors.Join(errs...)
}

// toClock converts an instant of the host's monotonic clock, as the daemon
// sends them (internal/monoclock), to the scheduler's clock.
func (s *Server) toClock(ns int64) time.Duration {
	return monoclock.Time(ns).Sub(s.clock.Start())
}

// toHost converts a scheduler time to the host's monotonic clock.
func (s *Server) toHost(t time.Duration) int64 {
	return monoclock.Of(s.clock.Start().Add(t))
}

// Health reports the executor's device and models.
func (s *Server) Health(context.Context, *pb.HealthRequest) (*pb.HealthResponse, error) {
	s.loop.checkDeviceAtHealth()
	info := s.opts.Runtime.Describe()
	s.mu.RLock()
	names := make([]string, 0, len(s.byName))
	for n := range s.byName {
		names = append(names, n)
	}
	s.mu.RUnlock()
	cores := make([]int32, len(s.opts.Device.Cores))
	for i, c := range s.opts.Device.Cores {
		cores[i] = int32(c)
	}
	return &pb.HealthResponse{
		Serving:           !s.loop.isDraining(),
		Draining:          s.loop.isDraining(),
		Version:           version.Version,
		Pid:               int32(os.Getpid()),
		DeviceKind:        s.opts.Device.Kind,
		DeviceName:        firstNonEmpty(info.DeviceName, s.opts.Device.Name),
		SizePercent:       int32(s.opts.Device.Size),
		SmCount:           int32(info.SMCount),
		MemoryBytes:       info.MemoryBytes,
		MemoryLimitBytes:  info.MemoryLimit,
		Provider:          info.Provider,
		PeakResidentBytes: peakResident(selfStatusPath),
		Threads:           int32(info.Threads),
		CpuCores:          cores,
		Engine:            info.Engine,
		Models:            names,
	}, nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// LoadModel loads, warms up and starts scheduling a model. A model loaded
// again only to retune it keeps its runtime (retune.go).
func (s *Server) LoadModel(ctx context.Context, req *pb.LoadModelRequest) (*pb.LoadModelResponse, error) {
	if req.Name == "" {
		return nil, status.Error(codes.InvalidArgument, "load model: no name")
	}
	if req.SloUs <= 0 {
		return nil, status.Errorf(codes.InvalidArgument, "load model %s: slo must be positive", req.Name)
	}
	if s.loop.isDraining() {
		return nil, status.Errorf(codes.Unavailable, "load model %s: executor is draining", req.Name)
	}
	s.mu.RLock()
	prev := s.byName[req.Name]
	s.mu.RUnlock()
	rt, warmed, err := retune(ctx, prev, req)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "load model %s: %v", req.Name, err)
	}
	shared := rt != nil
	if !shared {
		if rt, err = s.opts.Runtime.Load(ctx, req); err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error()) // it names the model (Runtime.Load)
		}
	}
	m, err := newModelEntry(req, rt)
	if err == nil && shared {
		m.refs = prev.refs // acquired by retune
		m.tunedFrom = prev
	}
	if err == nil && prev != nil {
		m.stats = prev.stats // the requests prev hands over are counted on
	}
	// letGo undoes this load: the runtime's hold, or the runtime.
	letGo := func() {
		if !shared || prev.refs.release() {
			_ = rt.Close()
		}
	}
	if err != nil {
		letGo()
		return nil, status.Errorf(codes.InvalidArgument, "load model %s: %v", req.Name, err)
	}
	old, err := s.loop.addModel(m)
	if err != nil {
		letGo()
		return nil, status.Errorf(codes.ResourceExhausted, "load model %s: %v", req.Name, err)
	}
	s.mu.Lock()
	s.byName[m.name] = m
	s.mu.Unlock()
	if old != nil {
		s.loop.handOver(old, m)
	}
	load, warmup := rt.LoadTime(), rt.WarmupTime()
	if shared {
		load, warmup = 0, warmed
	}
	s.log.Info("model loaded", zap.String("model", m.name), zap.Int("max_batch", m.maxBatch),
		zap.Bool("retuned", shared), zap.Duration("load", load), zap.Duration("warmup", warmup),
		zap.Duration("l1", m.lat.At(1)), zap.Duration("lmax", m.lat.At(m.lat.MaxBatch())))
	return &pb.LoadModelResponse{
		Inputs: rt.Inputs(), Outputs: rt.Outputs(),
		LoadUs: load.Microseconds(), WarmupUs: warmup.Microseconds(),
		DispatchOverhead: overheadToProto(rt.DispatchOverhead()),
	}, nil
}

// UnloadModel stops scheduling a model; its queued requests are answered
// UNAVAILABLE and it is closed once its running batch ends.
func (s *Server) UnloadModel(_ context.Context, req *pb.UnloadModelRequest) (*pb.UnloadModelResponse, error) {
	s.mu.Lock()
	m, ok := s.byName[req.Name]
	delete(s.byName, req.Name)
	s.mu.Unlock()
	if !ok {
		return nil, status.Errorf(codes.NotFound, "unload model %s: not loaded", req.Name)
	}
	s.loop.retire(m)
	return &pb.UnloadModelResponse{}, nil
}

// model returns a loaded model by name.
func (s *Server) model(name string) (*modelEntry, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.byName[name]
	return m, ok
}

// Drain stops taking requests and waits until the queued ones are answered.
func (s *Server) Drain(ctx context.Context, _ *pb.DrainRequest) (*pb.DrainResponse, error) {
	n, err := s.loop.drain(ctx)
	if err != nil {
		return nil, status.FromContextError(err).Err()
	}
	return &pb.DrainResponse{Answered: n}, nil
}

// SetPolicy switches the scheduler's policy: queued requests stay, the
// running batch runs on.
func (s *Server) SetPolicy(_ context.Context, req *pb.SetPolicyRequest) (*pb.SetPolicyResponse, error) {
	p, err := sched.ParsePolicy(req.Policy)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "set policy: %v", err)
	}
	var setErr error
	if !s.loop.call(func() { setErr = s.loop.sc.SetPolicy(s.loop.now(), p) }) {
		return nil, status.Error(codes.Unavailable, "set policy: executor is stopping")
	}
	if setErr != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", setErr)
	}
	s.log.Info("policy set", zap.String("policy", p.String()))
	return &pb.SetPolicyResponse{}, nil
}

// Stats returns the counters since start.
func (s *Server) Stats(context.Context, *pb.StatsRequest) (*pb.StatsResponse, error) {
	return s.loop.stats(), nil
}

// errorf builds an InferResponse carrying an error.
func errorf(id uint64, code pb.Code, format string, args ...any) *pb.InferResponse {
	return &pb.InferResponse{Id: id, Code: code, Error: fmt.Sprintf(format, args...)}
}
