package executor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"syscall"
	"time"

	"github.com/gpulet/gpuletd/executor/engine"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// fakeRuntime runs a model "double" on [N,4] FP32 inputs: output = 2·input,
// taking base + perRow·rows of real time, so tests exercise the real loop,
// scheduler and gRPC path without ONNX Runtime.
type fakeRuntime struct {
	base, perRow time.Duration
	// input and output are what each run reports of readying its inputs
	// and outputs (RunInfo).
	input, output time.Duration
	mu            sync.Mutex
	batches       []int       // rows of every batch run
	threads       map[int]int // batches run on each OS thread (gettid)
	failNext      bool
	broken        bool // every run fails, a probe's too
	hangNext      bool // the next run never ends (until cancelled)
	loaded        int
	closed        int
	// running, when set, is a running file whose ids each run records
	// in named, as it read them while it ran.
	running string
	named   [][]uint64
}

func (f *fakeRuntime) Describe() RuntimeInfo { return RuntimeInfo{Engine: "fake", Threads: 1} }
func (f *fakeRuntime) Close() error          { return nil }

func (f *fakeRuntime) Load(_ context.Context, req *pb.LoadModelRequest) (LoadedModel, error) {
	if req.Path == "broken" {
		return nil, fmt.Errorf("load model %s from broken: protobuf parsing failed", req.Name)
	}
	f.mu.Lock()
	f.loaded++
	f.mu.Unlock()
	return &fakeModel{f: f}, nil
}

func (f *fakeRuntime) batchSizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.batches...)
}

type fakeModel struct{ f *fakeRuntime }

func (m *fakeModel) Inputs() []*pb.TensorSpec {
	return []*pb.TensorSpec{{Name: "x", Datatype: "FP32", Shape: []int64{4}}}
}
func (m *fakeModel) Outputs() []*pb.TensorSpec {
	return []*pb.TensorSpec{{Name: "y", Datatype: "FP32", Shape: []int64{4}}, {Name: "z", Datatype: "FP32", Shape: []int64{1}}}
}

func (m *fakeModel) Validate(in []tensor.Tensor) error {
	if len(in) != 1 || in[0].Name != "x" {
		return errors.New("want one input named x")
	}
	if in[0].DataType != tensor.FP32 {
		return fmt.Errorf("input x is %s, the model takes FP32", in[0].DataType)
	}
	if len(in[0].Shape) != 2 || in[0].Shape[1] != 4 {
		return fmt.Errorf("input x has shape %v, the model takes [N,4]", in[0].Shape)
	}
	return nil
}

func (m *fakeModel) Run(ctx context.Context, inputs [][]tensor.Tensor) ([][]tensor.Tensor, RunInfo, error) {
	rows := 0
	for _, in := range inputs {
		rows += int(in[0].Shape[0])
	}
	m.f.mu.Lock()
	m.f.batches = append(m.f.batches, rows)
	if m.f.threads == nil {
		m.f.threads = map[int]int{}
	}
	m.f.threads[syscall.Gettid()]++
	if m.f.running != "" {
		m.f.named = append(m.f.named, readRunning(m.f.running))
	}
	fail, hang, broken := m.f.failNext, m.f.hangNext, m.f.broken
	m.f.failNext, m.f.hangNext = false, false
	m.f.mu.Unlock()
	d := m.f.base + time.Duration(rows)*m.f.perRow
	if hang {
		d = time.Duration(math.MaxInt64)
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return nil, RunInfo{}, ctx.Err()
	}
	if fail {
		return nil, RunInfo{}, errors.New("cuda error: illegal memory access")
	}
	if broken {
		return nil, RunInfo{}, fmt.Errorf("run model double: %w: Non-zero status code returned while running MatMul node", engine.ErrRunFailed)
	}
	for _, in := range inputs {
		// A first value of -1000 or less is data the model's graph fails
		// on otherwise than ONNX Runtime blames on inputs (a Reshape of a
		// size it cannot take); another negative one is data the model
		// cannot take (as a token id past an embedding's rows). Either
		// fails the whole batch.
		if v, _ := in[0].Float32s(); len(v) > 0 && v[0] <= -1000 {
			return nil, RunInfo{}, fmt.Errorf("run model double: %w: Non-zero status code returned while running Reshape node", engine.ErrRunFailed)
		}
		if v, _ := in[0].Float32s(); len(v) > 0 && v[0] < 0 {
			return nil, RunInfo{}, fmt.Errorf("run model double: %w: %w: index %v out of range", engine.ErrRunFailed, engine.ErrRejectedInput, v[0])
		}
	}
	out := make([][]tensor.Tensor, len(inputs))
	for i, in := range inputs {
		v, _ := in[0].Float32s()
		sum := float32(0)
		for k := range v {
			v[k] *= 2
			sum += v[k]
		}
		y, _ := tensor.FromFloat32s("y", in[0].Shape, v)
		z, _ := tensor.FromFloat32s("z", []int64{in[0].Shape[0], 1}, []float32{sum})
		if in[0].Shape[0] != 1 {
			z, _ = tensor.Zeros("z", tensor.FP32, []int64{in[0].Shape[0], 1})
		}
		out[i] = []tensor.Tensor{y, z}
	}
	return out, RunInfo{Compute: d, Input: m.f.input, Output: m.f.output}, nil
}

// Probe runs one zero-filled request, as engineModel's does.
func (m *fakeModel) Probe(ctx context.Context) error {
	x, err := tensor.Zeros("x", tensor.FP32, []int64{1, 4})
	if err != nil {
		return err
	}
	_, _, err = m.Run(ctx, [][]tensor.Tensor{{x}})
	return err
}

func (m *fakeModel) Latency() []*pb.LatencyPoint {
	var pts []*pb.LatencyPoint
	for _, b := range []int{1, 32} {
		ms := float64(m.f.base+time.Duration(b)*m.f.perRow) / float64(time.Millisecond)
		pts = append(pts, &pb.LatencyPoint{Batch: int32(b), Ms: math.Round(ms*1000) / 1000})
	}
	return pts
}
func (m *fakeModel) LoadTime() time.Duration   { return time.Millisecond }
func (m *fakeModel) WarmupTime() time.Duration { return time.Millisecond }
func (m *fakeModel) DispatchOverhead() sched.Overhead {
	return sched.ConstantOverhead(50 * time.Microsecond)
}
func (m *fakeModel) Close() error {
	m.f.mu.Lock()
	m.f.closed++
	m.f.mu.Unlock()
	return nil
}
