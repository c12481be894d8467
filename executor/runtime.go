package executor

import (
	"context"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// Runtime loads models for this executor's gpu-let: the engine as the
// server sees it.
type Runtime interface {
	// Load loads the model a LoadModel call describes and warms it up at
	// the requested batch sizes. Its errors name the model ("load model
	// NAME …"): LoadModel answers with them as they are.
	Load(ctx context.Context, req *pb.LoadModelRequest) (LoadedModel, error)
	// Describe says what the engine runs on, for Health.
	Describe() RuntimeInfo
	// Close releases the engine.
	Close() error
}

// RuntimeInfo is what an engine reports about itself.
type RuntimeInfo struct {
	Engine     string // onnxruntime | emulated
	Provider   string // cpu | cuda | tensorrt | emulated
	DeviceName string
	Threads    int
	SMCount    int
	// MemoryBytes is the device memory the engine sees; MemoryLimit the cap
	// on its arena (0: none).
	MemoryBytes, MemoryLimit int64
}

// LoadedModel is one loaded model: it checks and runs batches.
type LoadedModel interface {
	// Inputs and Outputs are per request (no batch dimension when the
	// model batches).
	Inputs() []*pb.TensorSpec
	Outputs() []*pb.TensorSpec
	// Validate checks one request's inputs against the model.
	Validate(inputs []tensor.Tensor) error
	// Run runs one batch: inputs per request, outputs (every output) per
	// request. It stops early, with an error, when ctx ends.
	Run(ctx context.Context, inputs [][]tensor.Tensor) (outputs [][]tensor.Tensor, info RunInfo, err error)
	// Latency is ℓ(b) measured at warm-up for the batch sizes warmed up,
	// used when the daemon sent no profile.
	Latency() []*pb.LatencyPoint
	// LoadTime and WarmupTime say what loading took.
	LoadTime() time.Duration
	WarmupTime() time.Duration
	// DispatchOverhead is the measured cost of a batch outside the model, at
	// the batch sizes measured.
	DispatchOverhead() sched.Overhead
	Close() error
}

// RunInfo describes one run.
type RunInfo struct {
	Compute time.Duration
	// Input and Output are the time spent readying the inputs before the
	// model ran and the outputs after (engine.RunInfo).
	Input, Output time.Duration
	Emulated      bool
}
