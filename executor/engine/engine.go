package engine

import (
	"context"
	"slices"
	"time"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// Engine kinds, as Info.Kind reports them.
const (
	KindONNXRuntime = "onnxruntime"
	KindEmulated    = "emulated"
)

// Engine loads models onto one gpu-let.
type Engine interface {
	// Load loads one model. The returned model is ready to run; Warmup is
	// up to the caller.
	Load(ctx context.Context, spec ModelSpec) (Loaded, error)
	// Close closes every model still loaded and releases the engine.
	Close() error
	// Info says what the engine runs on.
	Info() Info
}

// Loaded is one loaded model. Run, Validate and Warmup may be called from
// several goroutines, but the executor calls them from one goroutine per
// gpu-let; Close waits for runs in progress.
type Loaded interface {
	// Inputs and Outputs are the model's tensors per request: without the
	// batch dimension when the model batches.
	Inputs() []TensorSpec
	Outputs() []TensorSpec
	// MaxBatchSize is the most rows a batch may carry; 0: the model does
	// not batch and runs requests one by one.
	MaxBatchSize() int
	// Validate checks one request's input tensors against the model: every
	// input present once, no unknown names, data type, shape (-1 in a spec
	// matches any size) and byte length. Errors are *InputError with
	// Request -1.
	Validate(inputs []tensor.Tensor) error
	// ValidateOutputs checks requested output names; empty asks for all.
	ValidateOutputs(names []string) error
	// Run runs one batch: inputs[i] are request i's tensors. It returns,
	// per request, the outputs named (every output, in spec order, when
	// outputs is empty). Invalid requests fail the call before anything
	// runs, with errors wrapping ErrInvalidInput (InvalidRequests lists
	// them); a cancelled ctx stops the run and gives ErrCancelled.
	Run(ctx context.Context, inputs [][]tensor.Tensor, outputs []string) ([][]tensor.Tensor, RunInfo, error)
	// Warmup runs one zero-filled batch of each size and reports timings.
	Warmup(ctx context.Context, batches []int) (WarmupResult, error)
	// Close releases the model.
	Close() error
}

// TensorSpec describes one input or output per request.
type TensorSpec struct {
	// Name is the tensor's name in the model.
	Name string
	// DataType is its element type.
	DataType tensor.DataType
	// Shape is per request, with -1 for any size; without the batch
	// dimension when the model batches.
	Shape []int64
}

// Clone returns a deep copy of s.
func (s TensorSpec) Clone() TensorSpec {
	s.Shape = slices.Clone(s.Shape)
	return s
}

// ModelSpec says what to load.
type ModelSpec struct {
	// Name names the model in errors and logs.
	Name string
	// Path is the model file (onnxruntime); the emulated engine ignores it.
	Path string
	// Platform is the model file's format: "onnxruntime" (or empty) for
	// ONNX, "torchscript" for a TorchScript file, which only the emulated
	// engine serves (it reads no file).
	Platform string
	// MaxBatchSize is the most rows of a batch; 0 means the model does not
	// batch: requests run one by one.
	MaxBatchSize int
	// Inputs and Outputs are per request (see TensorSpec). The emulated
	// engine needs them. The onnxruntime engine reads the model's own and
	// uses these, when given, to check them and to fix dims the model
	// leaves open.
	Inputs  []TensorSpec
	Outputs []TensorSpec
	// Timing is how long batches take on the emulated engine.
	Timing Timing
	// MemoryMB is the device memory one loaded copy holds on the emulated
	// engine (EmulatedOptions.Memory); 0: none counted.
	MemoryMB float64
	// WarmupShapes gives, by input name, the dims of one request (without
	// the batch dimension) the warm-up fills the input's open dimensions
	// with: the sizes requests bring, which a model may need (a
	// convolution larger than 1×1 does not run on an image of 1×1). An
	// input not named is warmed up with 1 in each open dimension.
	WarmupShapes map[string][]int64
	// OpLibraries are custom operator libraries the onnxruntime engine
	// loads, in order, before it opens the model (Triton's
	// model_operations); the emulated engine ignores them.
	OpLibraries []string
	// GraphLevel is how far the onnxruntime engine optimizes the model's
	// graph, as Triton's optimization.graph.level: GraphLevelBasic (-1)
	// basic optimizations, GraphLevelExtended (1) basic and extended, any
	// other value all of them.
	GraphLevel int
}

// The values of ModelSpec.GraphLevel with a meaning of their own.
const (
	GraphLevelBasic    = -1
	GraphLevelExtended = 1
)

// Info says what an engine runs on, for the executor's Health answer.
type Info struct {
	// Kind is KindONNXRuntime or KindEmulated.
	Kind string
	// Provider is the execution provider: "cpu", "cuda", "tensorrt"; for
	// the emulated engine, "emulated".
	Provider string
	// Version is the runtime's version ("" for the emulated engine).
	Version string
	// DeviceName names the device, as given in the engine's options.
	DeviceName string
	// DeviceID is the CUDA device ordinal for the GPU providers.
	DeviceID int
	// Threads is the number of intra-op threads a run uses on the CPU.
	Threads int
	// SMCount and MemoryBytes are the GPU's streaming multiprocessors and
	// memory as the engine sees them; 0 when unknown or on the CPU.
	SMCount     int
	MemoryBytes int64
	// MemoryLimit is the cap on the engine's GPU memory arena; 0: none.
	MemoryLimit int64
	// Note says why Provider is not the one asked for, if it is not.
	Note string
}

// RunInfo describes one Run.
type RunInfo struct {
	// BatchSize is the rows the batch carried; for a model that does not
	// batch, the number of requests.
	BatchSize int
	// Runs is the number of model executions: 1 for a batch whose requests
	// share their non-batch dims, more when they do not or when the model
	// does not batch.
	Runs int
	// Compute is the time spent executing the model (the emulated engine:
	// the emulated duration).
	Compute time.Duration
	// Overhead is the rest of Run's time but Setup: validation, joining
	// inputs, creating runtime values, splitting outputs. It recurs with
	// every batch, and the scheduler adds it to ℓ(b) at the batch's size
	// (sched.Overhead).
	Overhead time.Duration
	// Input and Output are the parts of Overhead spent on the inputs
	// before the model ran (validating, joining the requests' rows,
	// padding) and on its outputs after (checking, trimming, splitting
	// them per request): Triton's compute_input and compute_output.
	Input, Output time.Duration
	// Setup is what happens once, at a batch size's first run: with fixed
	// shapes, opening that size's session (50–200 ms on a GPU). Counted as
	// Overhead it put 6–150 ms on every batch's ℓ on an H200, where the
	// recurring overhead is 0.1 ms.
	Setup time.Duration
	// Emulated marks zero-filled outputs from the emulated engine.
	Emulated bool
}

// WarmupResult reports what Warmup measured.
type WarmupResult struct {
	// Elapsed is the whole warm-up's wall time.
	Elapsed time.Duration
	// Batches holds one timing per warmed-up batch size, in the order asked;
	// their Overhead is the dispatch cost the scheduler adds to ℓ(b) at
	// their sizes (sched.Overhead).
	Batches []BatchTiming
}

// BatchTiming is one warm-up run.
type BatchTiming struct {
	// Batch is the batch size warmed up.
	Batch int
	// Compute, Overhead and Setup are as in RunInfo.
	Compute  time.Duration
	Overhead time.Duration
	Setup    time.Duration
}
