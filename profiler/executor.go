package profiler

import (
	"context"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/mps"
)

// Executor is a running executor on one gpu-let, as the profiler drives it:
// the real one is a `gpuletd executor` process (ProcessLauncher).
type Executor interface {
	// Health asks the executor what it runs on.
	Health(ctx context.Context) (*pb.HealthResponse, error)
	// LoadModel loads and warms up a model.
	LoadModel(ctx context.Context, req *pb.LoadModelRequest) (*pb.LoadModelResponse, error)
	// Infer sends one request and waits for its answer; an executor that
	// died fails it with an error wrapping executor.ErrExecutorGone.
	Infer(ctx context.Context, req *pb.InferRequest) (*pb.InferResponse, error)
	// Done is closed once the executor has exited.
	Done() <-chan struct{}
	// ExitErr says how it exited once Done is closed.
	ExitErr() error
	// Logs returns the last lines the executor logged, for error messages.
	Logs() string
	// Close stops the executor, waits for it and releases its gpu-let.
	Close() error
}

// Launcher starts an executor for a gpu-let and waits until it answers.
type Launcher interface {
	Launch(ctx context.Context, g mps.Gpulet) (Executor, error)
}
