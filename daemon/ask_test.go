package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/internal/monoclock"
	"github.com/gpulet/gpuletd/kserve"
)

// inferFunc is an executor as the request path sees it.
type inferFunc func(ctx context.Context, req *pb.InferRequest) (*pb.InferResponse, error)

func (f inferFunc) Infer(ctx context.Context, req *pb.InferRequest) (*pb.InferResponse, error) {
	return f(ctx, req)
}

// Heard: an inferFunc sends no frame but its answers.
func (inferFunc) Heard() uint64 { return 0 }

// chatty is an executor that never answers but keeps sending its state:
// alive, only slow.
type chatty struct{ frames atomic.Uint64 }

func (c *chatty) Infer(ctx context.Context, _ *pb.InferRequest) (*pb.InferResponse, error) {
	c.frames.Add(1) // the state it pushes as the request joins its queue
	<-ctx.Done()
	return nil, ctx.Err()
}

func (c *chatty) Heard() uint64 { return c.frames.Load() }

// answering is an executor that answers every request with res.
func answering(res *pb.InferResponse) inferFunc {
	return func(context.Context, *pb.InferRequest) (*pb.InferResponse, error) { return res, nil }
}

// failing is an executor whose call fails with err.
func failing(err error) inferFunc {
	return func(context.Context, *pb.InferRequest) (*pb.InferResponse, error) { return nil, err }
}

// askModel is a batching model with one FP32 input of 4 and one output
// "scores" configured as [2, 5] that the model file gives as [10].
func askModel() *repository.Model {
	return &repository.Model{Name: "m", Family: "m",
		Inputs:  []repository.TensorSpec{{Name: "x", DataType: tensor.FP32, Dims: []int64{4}}},
		Outputs: []repository.TensorSpec{{Name: "scores", DataType: tensor.FP32, Dims: []int64{2, 5}, Reshape: []int64{10}}},
		Config:  repository.ModelConfig{SLO: config.Duration(50 * time.Millisecond), MaxBatchSize: 8}}
}

// scores is an answer's output: n elements of FP32 in shape.
func scores(shape []int64, n int) *pb.Tensor {
	return &pb.Tensor{Name: "scores", Datatype: string(tensor.FP32), Shape: shape, Data: make([]byte, 4*n)}
}

func TestAskMapsWhatTheExecutorAnswers(t *testing.T) {
	tests := []struct {
		name   string
		exec   inferrer
		code   int
		reason string
		msg    string
		notRun bool // another gpu-let may take it
		silent bool // the executor stalled
	}{
		{name: "the executor dies with the request in flight",
			exec: failing(fmt.Errorf("infer: %w", executor.ErrExecutorGone)),
			code: http.StatusServiceUnavailable, reason: reasonExecutorFailed, msg: "m: the executor serving it failed while the request was in flight"},
		{name: "the executor is gone before the request reached it",
			exec: failing(fmt.Errorf("%w: send request: %w: broken pipe", executor.ErrNotSent, executor.ErrExecutorGone)),
			code: http.StatusServiceUnavailable, reason: reasonExecutorFailed, msg: "m: the executor serving it failed while the request was in flight", notRun: true},
		{name: "the executor did not run it",
			exec: answering(&pb.InferResponse{Code: pb.Code_UNAVAILABLE, Error: "executor is draining", NotRun: true}),
			code: http.StatusServiceUnavailable, reason: reasonUnavailable, msg: "m: executor is draining", notRun: true},
		{name: "the executor never answers and says nothing",
			exec: inferFunc(func(ctx context.Context, _ *pb.InferRequest) (*pb.InferResponse, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}),
			code: http.StatusServiceUnavailable, reason: reasonDeadline, msg: "m: no answer by the deadline", silent: true},
		{name: "the executor never answers but sends its state",
			exec: &chatty{},
			code: http.StatusServiceUnavailable, reason: reasonDeadline, msg: "m: no answer by the deadline"},
		{name: "the stream fails otherwise",
			exec: failing(errors.New("send request: broken pipe")),
			code: http.StatusServiceUnavailable, reason: reasonCancelled, msg: "m: send request: broken pipe"},
		{name: "the executor refuses the inputs",
			exec: answering(&pb.InferResponse{Code: pb.Code_INVALID_ARGUMENT, Error: "input x: wrong shape"}),
			code: http.StatusBadRequest, reason: reasonBadRequest, msg: "input x: wrong shape"},
		{name: "the deadline cannot be met",
			exec: answering(&pb.InferResponse{Code: pb.Code_DEADLINE, Error: "m: deadline_unreachable"}),
			code: http.StatusServiceUnavailable, reason: reasonDeadline, msg: "m: the deadline cannot be met (deadline_unreachable)"},
		{name: "the executor dropped it from its queue's head",
			exec: answering(&pb.InferResponse{Code: pb.Code_DROPPED, Error: "m: dropped"}),
			code: http.StatusServiceUnavailable, reason: reasonDropped, msg: "m: dropped so that the requests queued behind it meet their deadlines (dropped)"},
		{name: "the queue is full",
			exec: answering(&pb.InferResponse{Code: pb.Code_QUEUE_FULL, Error: "64 queued"}),
			code: http.StatusServiceUnavailable, reason: reasonQueueFull, msg: "m: overloaded (64 queued)"},
		{name: "the model is not loaded there",
			exec: answering(&pb.InferResponse{Code: pb.Code_NOT_FOUND, Error: "no model m"}),
			code: http.StatusServiceUnavailable, reason: reasonUnavailable, msg: "m: no model m"},
		{name: "the engine fails",
			exec: answering(&pb.InferResponse{Code: pb.Code_INTERNAL, Error: "run: out of memory"}),
			code: http.StatusInternalServerError, reason: reasonInternal, msg: "m: run: out of memory"},
		{name: "an output whose bytes do not fill its shape",
			exec: answering(&pb.InferResponse{Outputs: []*pb.Tensor{scores([]int64{1, 10}, 7)}}),
			code: http.StatusInternalServerError, reason: reasonInternal, msg: "m: bad output from the executor"},
		{name: "an output of an unknown data type",
			exec: answering(&pb.InferResponse{Outputs: []*pb.Tensor{{Name: "scores", Datatype: "FP128", Shape: []int64{1}, Data: make([]byte, 16)}}}),
			code: http.StatusInternalServerError, reason: reasonInternal, msg: "m: bad output from the executor"},
		{name: "an output that does not fit its configured shape",
			exec: answering(&pb.InferResponse{Outputs: []*pb.Tensor{scores([]int64{1, 9}, 9)}}),
			code: http.StatusInternalServerError, reason: reasonInternal, msg: `m: bad output from the executor: output "scores"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &node{}
			n.metrics = newMetrics(n)
			// A deadline in the past gives "never answers" its grace only:
			// the call's context ends 100 ms from now.
			deadline := time.Now().Add(100*time.Millisecond - answerGrace(askModel().Config.SLO.D()))
			res, ierr := n.ask(context.Background(), tt.exec, askModel(), nil, nil, deadline, false)
			require.Nil(t, res)
			require.NotNil(t, ierr)
			require.Equal(t, tt.code, ierr.code)
			require.Equal(t, tt.reason, ierr.reason)
			require.Contains(t, ierr.msg, tt.msg)
			require.Equal(t, tt.notRun, ierr.notRun)
			require.Equal(t, tt.silent, ierr.silent)
			require.Equal(t, tt.code == http.StatusBadRequest, ierr.clientFault())
			require.Zero(t, sampleCount(t, n.metrics.compute, "m"), "a failed request is no compute sample")
		})
	}
}

func TestAskReturnsTheAnswerInTheModelsShapes(t *testing.T) {
	tests := []struct {
		name string
		held int64 // the executor's held time, µs; 0: an executor that does not say
		hops uint64
	}{
		{name: "an executor that says how long it held the request", held: 40, hops: 1},
		{name: "an executor that does not say", held: 0, hops: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &node{}
			n.metrics = newMetrics(n)
			deadline := time.Now().Add(time.Minute)
			in := tensor.Tensor{Name: "x", DataType: tensor.FP32, Shape: []int64{2, 4}, Data: make([]byte, 32)}
			var sent *pb.InferRequest
			exec := func(ctx context.Context, req *pb.InferRequest) (*pb.InferResponse, error) {
				sent = req
				d, ok := ctx.Deadline()
				require.True(t, ok)
				require.Equal(t, deadline.Add(200*time.Millisecond), d, "the call waits its grace past the request's deadline: the SLO, at least 200 ms")
				return &pb.InferResponse{Outputs: []*pb.Tensor{scores([]int64{2, 10}, 20)},
					BatchSize: 6, QueueUs: 300, ComputeUs: 700, HeldUs: tt.held, Emulated: true}, nil
			}
			res, ierr := n.ask(context.Background(), inferFunc(exec), askModel(), []tensor.Tensor{in}, []string{"scores"}, deadline, false)
			require.Nil(t, ierr)

			require.Equal(t, "m", sent.Model)
			require.Equal(t, []string{"scores"}, sent.Outputs)
			require.Equal(t, monoclock.Of(deadline), sent.DeadlineMonoNs, "the deadline travels on the host's monotonic clock")
			require.Len(t, sent.Inputs, 1)
			require.Equal(t, []int64{2, 4}, sent.Inputs[0].Shape)

			require.Len(t, res.outs, 1)
			require.Equal(t, []int64{2, 2, 5}, res.outs[0].Shape, "the model file's [10] goes back to the configured [2, 5]")
			require.Equal(t, int32(6), res.batch)
			require.True(t, res.emulated)

			c := n.counters.of("m")
			require.Equal(t, kserve.StatDuration{Count: 1, NS: 300_000}, c.queue.stat())
			require.Equal(t, kserve.StatDuration{Count: 1, NS: 700_000}, c.compute.stat())
			for _, h := range []*prometheus.HistogramVec{n.metrics.queue, n.metrics.compute, n.metrics.batch} {
				require.Equal(t, uint64(1), sampleCount(t, h, "m"))
			}
			require.Equal(t, tt.hops, sampleCount(t, n.metrics.hop, "m"))
		})
	}
}

// sampleCount is how many observations the histogram h holds for model; 0
// when it has none.
func sampleCount(t *testing.T, h *prometheus.HistogramVec, model string) uint64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(h))
	fams, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "model" && l.GetValue() == model {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}
