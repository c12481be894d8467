package loadgen

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// grpcStream carries a run's requests over one ModelStreamInfer stream, as
// perf_analyzer's --streaming does: each request goes out with an id of
// its own and its answer, which may come in any order, is matched by it.
// Its reader is the one goroutine it starts; close ends it.
type grpcStream struct {
	stream pb.GRPCInferenceService_ModelStreamInferClient
	cancel context.CancelFunc
	sendMu sync.Mutex
	nextID atomic.Uint64

	mu      sync.Mutex
	waiting map[string]chan *pb.ModelStreamInferResponse
	err     error         // why the stream ended, once it has
	done    chan struct{} // closed when the reader has ended
}

// errStreamEnded is wrapped by the error of a request whose stream ended
// before it was answered.
var errStreamEnded = errors.New("the stream ended")

// openStream opens a ModelStreamInfer stream on c, with opts, for the
// life of ctx or until close.
func openStream(ctx context.Context, c pb.GRPCInferenceServiceClient, opts ...grpc.CallOption) (*grpcStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := c.ModelStreamInfer(ctx, opts...)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("open stream: %w", err)
	}
	s := &grpcStream{stream: st, cancel: cancel, waiting: map[string]chan *pb.ModelStreamInferResponse{}, done: make(chan struct{})}
	go s.read()
	return s, nil
}

// read hands each answer to the request waiting for its id (an answer
// nobody waits for any more is dropped) until the stream ends, then ends
// every wait with why.
func (s *grpcStream) read() {
	defer close(s.done)
	for {
		res, err := s.stream.Recv()
		if err != nil {
			s.mu.Lock()
			s.err = fmt.Errorf("%w: %w", errStreamEnded, err)
			for id, ch := range s.waiting {
				close(ch)
				delete(s.waiting, id)
			}
			s.mu.Unlock()
			return
		}
		id := res.GetInferResponse().GetId()
		s.mu.Lock()
		ch, ok := s.waiting[id]
		delete(s.waiting, id)
		s.mu.Unlock()
		if ok {
			ch <- res
		}
	}
}

// infer sends r on the stream under an id of its own and waits for its
// answer until ctx ends: the answer (which may carry an error message),
// or why none came.
func (s *grpcStream) infer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelStreamInferResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := strconv.FormatUint(s.nextID.Add(1), 10)
	ch := make(chan *pb.ModelStreamInferResponse, 1)
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return nil, s.err
	}
	s.waiting[id] = ch
	s.mu.Unlock()
	req := &pb.ModelInferRequest{ModelName: r.ModelName, ModelVersion: r.ModelVersion, Id: id, Parameters: r.Parameters,
		Inputs: r.Inputs, Outputs: r.Outputs, RawInputContents: r.RawInputContents}
	s.sendMu.Lock()
	err := s.stream.Send(req)
	s.sendMu.Unlock()
	if err != nil {
		s.forget(id)
		return nil, fmt.Errorf("%w: %w", errStreamEnded, err)
	}
	select {
	case res, ok := <-ch:
		if !ok {
			s.mu.Lock()
			defer s.mu.Unlock()
			return nil, s.err
		}
		return res, nil
	case <-ctx.Done():
		s.forget(id)
		return nil, ctx.Err()
	}
}

// forget stops waiting for id's answer.
func (s *grpcStream) forget(id string) {
	s.mu.Lock()
	delete(s.waiting, id)
	s.mu.Unlock()
}

// close ends the stream, its sending side first, and waits for its reader.
func (s *grpcStream) close() {
	s.sendMu.Lock()
	_ = s.stream.CloseSend()
	s.sendMu.Unlock()
	s.cancel()
	<-s.done
}

// streamFailure is the report's key and message for an answer on a stream
// that carries an error: "stream" and gpuletd's reason when it gives one
// (the response's ParamFailureReason), as a REST failure's key has it.
func streamFailure(res *pb.ModelStreamInferResponse) (key, msg string) {
	key = "stream error"
	if why := res.GetInferResponse().GetParameters()[kserve.ParamFailureReason].GetStringParam(); why != "" {
		key = "stream " + why
	}
	return key, res.ErrorMessage
}

// grpcFailure is the report's key for a failed gRPC call: its status
// code's name, and gpuletd's reason when its ErrorInfo gives one
// ("Unavailable deadline"), as a REST failure's key has it.
func grpcFailure(st *status.Status) string {
	key := st.Code().String()
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Domain == kserve.ErrorDomain && info.Reason != "" {
			return key + " " + info.Reason
		}
	}
	return key
}
