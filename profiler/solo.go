package profiler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/executor"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/mps"
	"go.uber.org/zap"
	"google.golang.org/grpc/status"
)

// profileSLO is the SLO a profiled model is loaded with: long enough that no
// request is ever dropped for its deadline, whatever the point costs.
const profileSLO = time.Hour

// progressEvery throttles the in-progress reports of one point.
const progressEvery = 200 * time.Millisecond

// loaded is the model loaded on one executor.
type loaded struct {
	x      Executor
	size   int
	inputs []*pb.TensorSpec
	// ownMB is the executor's resident memory before it loaded the model;
	// 0: it did not say.
	ownMB float64
}

// soloSize measures every batch at one size on its own executor.
func (r *runner) soloSize(ctx context.Context, size int) error {
	l, err := r.launchLoaded(ctx, size, "profile", nil)
	if err != nil {
		return err
	}
	defer r.closeExecutor(l.x, size)
	for i, b := range r.job.Batches {
		pt, err := r.samplePoint(ctx, l, b)
		skip := r.skipAfter(pt, r.job.Batches[i+1:])
		if pt.Samples > 0 {
			if rerr := r.record(ctx, pt); rerr != nil {
				return errors.Join(err, rerr)
			}
			r.progress(Progress{Phase: "solo", Done: r.done, Total: r.total, Size: size, Batch: b, Samples: pt.Samples,
				Finished: pt.Complete, P50MS: pt.P50MS, Stable: pt.Stable})
		}
		if err != nil {
			return err
		}
		if len(r.job.UtilBatches) == 0 || slices.Contains(r.job.UtilBatches, b) {
			if err := r.soloUtil(ctx, l, b); err != nil {
				return err
			}
		}
		if skip {
			break
		}
	}
	return r.recordMemory(ctx, l)
}

// skipAfter reports whether the batches after point pt (rest) are skipped
// at its size: it is complete and took SkipPastMS or longer. They then
// leave the job's total.
func (r *runner) skipAfter(pt Point, rest []int) bool {
	if len(rest) == 0 || r.job.SkipPastMS <= 0 || !pt.Complete || pt.P50MS < r.job.SkipPastMS {
		return false
	}
	r.total -= len(rest)
	r.log.Info("larger batches not measured at this size: this one takes the skip time or longer",
		zap.Int("size", pt.Size), zap.Int("batch", pt.Batch), zap.Float64("p50_ms", pt.P50MS),
		zap.Float64("skip_past_ms", r.job.SkipPastMS), zap.Ints("not_measured", rest))
	return true
}

// launchLoaded starts an executor of the given size and loads the model on
// it, with warm-up at every profiled batch. taken lists MIG instances other
// executors of this job hold.
func (r *runner) launchLoaded(ctx context.Context, size int, role string, taken map[string]bool) (*loaded, error) {
	d := r.job.Device
	g, err := gpuletFor(d, fmt.Sprintf("%s-p%d", role, size), size, taken)
	if err != nil {
		return nil, fmt.Errorf("profile %s on %s: %w", r.job.Model.Name, d.ID, err)
	}
	launched := time.Now()
	x, err := r.job.Launcher.Launch(ctx, g)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("profile %s on %s at %d%%: %w", r.job.Model.Name, d.ID, size, err)
	}
	if g.MIGInstance != "" && taken != nil {
		taken[g.MIGInstance] = true
	}
	h, err := x.Health(ctx)
	if err != nil {
		err = r.executorErr(ctx, x, size, "ask the executor's health", err)
		r.closeExecutor(x, size)
		return nil, err
	}
	started := time.Since(launched)
	req := r.loadRequest()
	lr, err := x.LoadModel(ctx, req)
	if err != nil {
		defer r.closeExecutor(x, size)
		if reason := exitReason(x, time.Second); reason != "" || ctx.Err() != nil {
			return nil, r.executorErr(ctx, x, size, "load the model", err)
		}
		msg := grpcMessage(err)
		if !strings.Contains(msg, r.job.Model.Path) {
			msg += " (model file " + r.job.Model.Path + ")"
		}
		return nil, fmt.Errorf("profile %s on %s at %d%%: %w: %s", r.job.Model.Name, d.ID, size, ErrModelLoad, msg)
	}
	r.log.Info("model loaded", zap.Int("size", size), zap.String("engine", h.Engine), zap.Int32s("cores", h.CpuCores),
		zap.Duration("start", started), zap.Int64("load_us", lr.LoadUs), zap.Int64("warmup_us", lr.WarmupUs))
	if role == "profile" {
		r.res.Executors = append(r.res.Executors, ExecutorInfo{Size: size, Engine: h.Engine, Threads: int(h.Threads),
			Cores: int32s(h.CpuCores), SMCount: int(h.SmCount), StartMS: msOf(started),
			LoadMS: float64(lr.LoadUs) / 1000, WarmupMS: float64(lr.WarmupUs) / 1000})
	}
	return &loaded{x: x, size: size, inputs: lr.Inputs, ownMB: float64(h.PeakResidentBytes) / (1 << 20)}, nil
}

// loadRequest loads the model for profiling: an SLO no point can miss, the
// largest profiled batch as max batch size and a warm-up at every batch,
// or only at the smallest when larger ones may be skipped (SkipPastMS):
// each point's own warm-up runs (the stop rule's) then cover it, and a
// skipped batch costs nothing.
func (r *runner) loadRequest() *pb.LoadModelRequest {
	m := r.job.Model
	maxB := 0
	if m.MaxBatchSize > 0 {
		maxB = slices.Max(r.job.Batches)
	}
	batches := r.job.Batches
	if r.job.SkipPastMS > 0 {
		batches = batches[:1]
	}
	warm := make([]int32, len(batches))
	for i, b := range batches {
		warm[i] = int32(b)
	}
	platform := m.Platform
	if platform == "" {
		platform = "onnxruntime"
	}
	return &pb.LoadModelRequest{
		Name: m.Name, Version: 1, Path: m.Path, Platform: platform, MaxBatchSize: int32(maxB),
		SloUs: profileSLO.Microseconds(), WarmupBatches: warm, WarmupShapes: executor.ShapesToProto(m.Shapes),
		OpLibraries: m.OpLibraries, GraphLevel: int32(m.GraphLevel),
	}
}

// closeExecutor stops an executor, logging a failure to stop.
func (r *runner) closeExecutor(x Executor, size int) {
	if err := x.Close(); err != nil {
		r.log.Warn("executor did not stop cleanly", zap.Int("size", size), zap.Error(err))
	}
}

// samplePoint measures batch b on a loaded executor until the stop rule is
// met. On error it returns what it sampled, as an incomplete point.
func (r *runner) samplePoint(ctx context.Context, l *loaded, b int) (Point, error) {
	inputs, err := requestInputs(l.inputs, r.job.Model.Shapes, b, r.job.Model.MaxBatchSize > 0, uint64(l.size)<<16|uint64(b))
	if err != nil {
		return Point{Size: l.size, Batch: b}, fmt.Errorf("profile %s on %s at %d%%: %w: %v", r.job.Model.Name, r.job.Device.ID, l.size, ErrModelLoad, err)
	}
	rule := r.job.Rule
	for range rule.Warmup {
		if _, err := r.infer(ctx, l, b, inputs); err != nil {
			return Point{Size: l.size, Batch: b}, err
		}
	}
	var samples []float64
	start, last := time.Now(), time.Now()
	for {
		ms, err := r.infer(ctx, l, b, inputs)
		if err != nil {
			return pointOf(l.size, b, samples, rule.Z, false, false), err
		}
		samples = append(samples, ms)
		switch rule.Judge(samples, time.Since(start)) {
		case Stable:
			return pointOf(l.size, b, samples, rule.Z, true, true), nil
		case Capped:
			return pointOf(l.size, b, samples, rule.Z, true, false), nil
		}
		if time.Since(last) >= progressEvery {
			last = time.Now()
			r.progress(Progress{Phase: "solo", Done: r.done, Total: r.total, Size: l.size, Batch: b, Samples: len(samples)})
		}
	}
}

// pointOf summarises samples into a point.
func pointOf(size, b int, samples []float64, z float64, complete, stable bool) Point {
	p := Point{Size: size, Batch: b, Samples: len(samples), Complete: complete, Stable: stable,
		P99MS: Num(math.NaN()), MeanMS: Num(math.NaN())}
	if len(samples) == 0 {
		return p
	}
	s := summarize(samples, z)
	p.P50MS, p.P99MS, p.MeanMS = s.P50MS, Num(s.P99MS), Num(s.MeanMS)
	return p
}

// minSampleMS is the floor of one sample: compute_us has a resolution of
// 1 µs, and the store needs a positive latency.
const minSampleMS = 0.001

// infer sends one request of b rows and returns the batch's engine time in
// ms.
func (r *runner) infer(ctx context.Context, l *loaded, b int, inputs []*pb.Tensor) (float64, error) {
	resp, err := l.x.Infer(ctx, &pb.InferRequest{Model: r.job.Model.Name, Inputs: inputs})
	if err != nil {
		return 0, r.executorErr(ctx, l.x, l.size, fmt.Sprintf("run batch %d", b), err)
	}
	if resp.Code != pb.Code_OK {
		return 0, fmt.Errorf("profile %s on %s at %d%%: run batch %d: %w: %s: %s", r.job.Model.Name, r.job.Device.ID, l.size, b, ErrModelLoad, resp.Code, resp.Error)
	}
	if r.job.Model.MaxBatchSize > 0 && int(resp.BatchSize) != b {
		return 0, fmt.Errorf("profile %s on %s at %d%%: a request of %d rows ran as a batch of %d; the executor must run a policy that batches a request's rows together (%s)", r.job.Model.Name, r.job.Device.ID, l.size, b, resp.BatchSize, BatchPolicy)
	}
	return max(float64(resp.ComputeUs)/1000, minSampleMS), nil
}

// executorErr classifies a failed call to an executor: ctx's end as is, an
// executor that is gone as ErrDeviceLost (with how it ended and its last
// log lines), anything else as it came.
func (r *runner) executorErr(ctx context.Context, x Executor, size int, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	reason := exitReason(x, 2*time.Second)
	if reason == "" && !errors.Is(err, executor.ErrExecutorGone) {
		return fmt.Errorf("profile %s on %s at %d%%: %s: %w", r.job.Model.Name, r.job.Device.ID, size, what, err)
	}
	if reason == "" {
		reason = err.Error()
	}
	tail := logTail(x.Logs())
	if libs := r.job.Model.OpLibraries; len(libs) > 0 && strings.HasPrefix(tail, crashedTail) {
		tail += " (the model's custom operator libraries run there: " + strings.Join(libs, ", ") + ")"
	}
	return fmt.Errorf("profile %s on %s at %d%%: %s: %w: %s%s", r.job.Model.Name, r.job.Device.ID, size, what, ErrDeviceLost, reason, tail)
}

// soloUtil measures and stores the utilisation of point (b, size).
func (r *runner) soloUtil(ctx context.Context, l *loaded, b int) error {
	inputs, err := requestInputs(l.inputs, r.job.Model.Shapes, b, r.job.Model.MaxBatchSize > 0, uint64(l.size)<<16|uint64(b))
	if err != nil {
		return err
	}
	t := UtilTarget{Model: r.job.Model, Device: r.job.Device, Size: l.size, Batch: b,
		Work: func(wctx context.Context) error {
			for wctx.Err() == nil {
				if _, err := r.infer(wctx, l, b, inputs); err != nil {
					if wctx.Err() != nil && ctx.Err() == nil {
						return nil
					}
					return err
				}
			}
			return nil
		}}
	if len(r.job.Meters) > 0 {
		r.progress(Progress{Phase: "util", Done: r.done, Total: r.total, Size: l.size, Batch: b})
	}
	u, notes := measureUtil(ctx, r.job.Meters, t, r.log)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.res.Notes = append(r.res.Notes, notes...)
	return r.recordUtil(ctx, u)
}

// gpuletFor describes the gpu-let of one executor: on MIG GPUs a free
// instance of that size not in taken.
func gpuletFor(d mps.Device, id string, size int, taken map[string]bool) (mps.Gpulet, error) {
	g := mps.Gpulet{ID: id, Device: d.ID, Size: size}
	if d.Backend != mps.BackendMIG {
		return g, nil
	}
	if d.MIG != nil {
		for _, in := range d.MIG.Instances {
			if in.Size == size && in.UUID != "" && len(in.Processes) == 0 && !taken[in.UUID] {
				g.MIGInstance = in.UUID
				return g, nil
			}
		}
	}
	return g, fmt.Errorf("%w: no free MIG instance of %d%% on %s: create one first (gpuletd serve lays MIG instances out)", ErrSizeNotAllowed, size, d.ID)
}

// grpcMessage is the message of a gRPC status error, or the error's text.
func grpcMessage(err error) string {
	return status.Convert(err).Message()
}

func int32s(xs []int32) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

// msOf is d in milliseconds.
func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
