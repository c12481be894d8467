package executor

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/executor/engine"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// EngineRuntime serves a Runtime from an engine (onnxruntime or emulated).
type EngineRuntime struct {
	Engine engine.Engine
	// Seed seeds the emulated engine's jitter, per model.
	Seed uint64
}

// Describe implements Runtime.
func (r *EngineRuntime) Describe() RuntimeInfo {
	info := r.Engine.Info()
	return RuntimeInfo{Engine: info.Kind, Provider: info.Provider, DeviceName: info.DeviceName, Threads: info.Threads,
		SMCount: info.SMCount, MemoryBytes: info.MemoryBytes, MemoryLimit: info.MemoryLimit}
}

// Close implements Runtime.
func (r *EngineRuntime) Close() error { return r.Engine.Close() }

// Load implements Runtime: it loads the model, warms it up at the requested
// batch sizes (every size up to max_batch_size that the profile names when
// none are requested) and measures ℓ(b) there.
func (r *EngineRuntime) Load(ctx context.Context, req *pb.LoadModelRequest) (LoadedModel, error) {
	// The load and every warm-up batch on one thread: ONNX Runtime's CUDA
	// provider keeps state per session for each thread that runs it (see
	// the loop's worker, which serves every batch from a thread of its own).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	spec := engine.ModelSpec{
		Name: req.Name, Path: req.Path, Platform: req.Platform, MaxBatchSize: int(req.MaxBatchSize),
		Inputs: specsFromProto(req.Inputs), Outputs: specsFromProto(req.Outputs), MemoryMB: req.EmulatedMemoryMb,
		WarmupShapes: shapesFromProto(req.WarmupShapes), OpLibraries: req.OpLibraries, GraphLevel: int(req.GraphLevel),
	}
	if len(req.Latency) > 0 {
		lat, err := profileLatency(req.Latency)
		if err != nil {
			return nil, fmt.Errorf("load model %s: %w", req.Name, err)
		}
		r.Seed++
		spec.Timing = engine.Timing{
			Latency:    func(b int) time.Duration { return lat.At(min(max(b, 1), lat.MaxBatch())) },
			Contention: req.EmulatedContention,
			Jitter:     engine.Jitter{Seed: r.Seed},
		}
	}
	start := time.Now()
	m, err := r.Engine.Load(ctx, spec)
	if err != nil {
		return nil, err
	}
	loadTime := time.Since(start)
	batches := warmupBatches(req)
	w, err := m.Warmup(ctx, batches)
	if err != nil {
		_ = m.Close()
		return nil, fmt.Errorf("load model %s: warm up %s: %w", req.Name, req.Name, err)
	}
	lm := &engineModel{m: m, load: loadTime, warmup: w.Elapsed}
	lm.measured(w)
	for _, bt := range w.Batches {
		// The overhead is added to ℓ(b) apart (DispatchOverhead).
		ms := float64(bt.Compute) / float64(time.Millisecond)
		lm.latency = append(lm.latency, &pb.LatencyPoint{Batch: int32(bt.Batch), Ms: max(ms, 0.001)})
	}
	return lm, nil
}

// warmupBatches are the batch sizes to run before a model serves: those the
// daemon asks for, else 1 and powers of two up to the largest batch. Without
// a profile the scheduler's ℓ(b) comes from these runs, so they then always
// reach the largest batch.
func warmupBatches(req *pb.LoadModelRequest) []int {
	top := max(int(req.MaxBatchSize), 1)
	var out []int
	if len(req.WarmupBatches) > 0 {
		for _, b := range req.WarmupBatches {
			out = append(out, int(b))
		}
	} else {
		for b := 1; b < top; b *= 2 {
			out = append(out, b)
		}
		out = append(out, top)
	}
	if len(req.Latency) == 0 && slices.Max(out) < top {
		out = append(out, top)
	}
	return out
}

// profileLatency turns the daemon's profile into ℓ(b) for the emulated
// engine's timing (interpolated between profiled batch sizes).
func profileLatency(pts []*pb.LatencyPoint) (sched.Latency, error) {
	return sched.NewLatency(SchedPoints(pts), 1, nil, 0)
}

func specsFromProto(ps []*pb.TensorSpec) []engine.TensorSpec {
	out := make([]engine.TensorSpec, len(ps))
	for i, p := range ps {
		out[i] = engine.TensorSpec{Name: p.Name, DataType: tensor.DataType(p.Datatype), Shape: p.Shape}
	}
	return out
}

// shapesFromProto reads a load's warm-up shapes; nil when it gives none.
func shapesFromProto(shapes map[string]*pb.Dims) map[string][]int64 {
	if len(shapes) == 0 {
		return nil
	}
	out := make(map[string][]int64, len(shapes))
	for name, d := range shapes {
		out[name] = d.GetDims()
	}
	return out
}

// ShapesToProto writes warm-up shapes (a model's profile_shapes) for a
// load; nil when there are none.
func ShapesToProto(shapes map[string][]int64) map[string]*pb.Dims {
	if len(shapes) == 0 {
		return nil
	}
	out := make(map[string]*pb.Dims, len(shapes))
	for name, dims := range shapes {
		out[name] = &pb.Dims{Dims: dims}
	}
	return out
}

func specsToProto(ss []engine.TensorSpec) []*pb.TensorSpec {
	out := make([]*pb.TensorSpec, len(ss))
	for i, s := range ss {
		out[i] = &pb.TensorSpec{Name: s.Name, Datatype: string(s.DataType), Shape: s.Shape}
	}
	return out
}

// engineModel adapts engine.Loaded to LoadedModel.
type engineModel struct {
	m            engine.Loaded
	latency      []*pb.LatencyPoint
	load, warmup time.Duration

	mu       sync.Mutex
	overhead map[int]time.Duration // by batch size warmed up
}

// measured keeps a warm-up's overhead at each batch size, the last
// measurement of a size replacing an earlier one.
func (e *engineModel) measured(w engine.WarmupResult) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.overhead == nil {
		e.overhead = map[int]time.Duration{}
	}
	for _, bt := range w.Batches {
		e.overhead[bt.Batch] = bt.Overhead
	}
}

// DispatchOverhead implements LoadedModel: the overhead at every batch size
// warmed up so far (a retune warms new ones).
func (e *engineModel) DispatchOverhead() sched.Overhead {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := make(sched.Overhead, 0, len(e.overhead))
	for b, d := range e.overhead {
		o = append(o, sched.LatencyPoint{Batch: b, MS: float64(d) / float64(time.Millisecond)})
	}
	slices.SortFunc(o, func(a, b sched.LatencyPoint) int { return a.Batch - b.Batch })
	return o
}

func (e *engineModel) Inputs() []*pb.TensorSpec          { return specsToProto(e.m.Inputs()) }
func (e *engineModel) Outputs() []*pb.TensorSpec         { return specsToProto(e.m.Outputs()) }
func (e *engineModel) Validate(in []tensor.Tensor) error { return e.m.Validate(in) }
func (e *engineModel) Latency() []*pb.LatencyPoint       { return e.latency }
func (e *engineModel) LoadTime() time.Duration           { return e.load }
func (e *engineModel) WarmupTime() time.Duration         { return e.warmup }
func (e *engineModel) Close() error                      { return e.m.Close() }

// Warm implements warmer: a zero-filled batch of each size not warmed up
// yet. A retune runs while the model serves, on the same GPU share: a size
// already run (its session open, its algorithms chosen) is not run again.
func (e *engineModel) Warm(ctx context.Context, batches []int) (time.Duration, error) {
	e.mu.Lock()
	fresh := slices.DeleteFunc(slices.Clone(batches), func(b int) bool {
		_, done := e.overhead[b]
		return done
	})
	e.mu.Unlock()
	if len(fresh) == 0 {
		return 0, nil
	}
	runtime.LockOSThread() // as in Load
	defer runtime.UnlockOSThread()
	w, err := e.m.Warmup(ctx, fresh)
	if err == nil {
		e.measured(w)
	}
	return w.Elapsed, err
}

// Probe implements prober: one zero-filled request of the warm-up shapes,
// on the calling thread (the worker's).
func (e *engineModel) Probe(ctx context.Context) error {
	_, err := e.m.Warmup(ctx, []int{1})
	return err
}

// PaddedBatch is the batch size the engine runs a batch of n at (n unless
// the engine pads batches to fixed sizes).
func (e *engineModel) PaddedBatch(n int) int {
	if p, ok := e.m.(batchPadder); ok {
		return p.PaddedBatch(n)
	}
	return n
}

func (e *engineModel) Run(ctx context.Context, inputs [][]tensor.Tensor) ([][]tensor.Tensor, RunInfo, error) {
	outs, info, err := e.m.Run(ctx, inputs, nil)
	return outs, RunInfo{Compute: info.Compute, Input: info.Input, Output: info.Output, Emulated: info.Emulated}, err
}
