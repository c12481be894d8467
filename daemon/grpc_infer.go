package daemon

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// ModelInfer runs one request through the path REST requests take.
func (s *grpcServer) ModelInfer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	res, held, ierr := s.n.inferGRPC(ctx, r, time.Now())
	if ierr != nil {
		return nil, grpcError(ierr)
	}
	s.n.grpcAnswers.keep(ctx, res, held)
	if proto.Size(res) < minCompressedAnswer {
		// gRPC answers in the coding the request came in; a small answer
		// goes as it is, as over REST, since compressing it only costs
		// both sides CPU (a compressor's reset alone clears its tables).
		_ = grpc.SetSendCompressor(ctx, encoding.Identity)
	}
	return res, nil
}

// ModelStreamInfer runs every request of the stream as it arrives, at most
// limits.max_queued_per_model at once, and sends each answer when it is
// ready; a failed request is answered with error_message beside its id, and
// the stream goes on. The requests of one sequence of a stateful model run
// in the order sent (streamOrder). When the daemon stops, the stream ends UNAVAILABLE
// once the requests it runs are answered (errStopping).
func (s *grpcServer) ModelStreamInfer(stream pb.GRPCInferenceService_ModelStreamInferServer) error {
	ctx := stream.Context()
	var (
		wg   sync.WaitGroup
		send sync.Mutex
	)
	defer wg.Wait()
	slots := make(chan struct{}, max(1, s.n.conf().Limits.MaxQueuedPerModel))
	var order streamOrder
	received := make(chan streamed)
	go receiveStream(ctx, stream, received) // ends with the stream, when this returns
	for {
		var r *pb.ModelInferRequest
		select {
		case m := <-received:
			if errors.Is(m.err, io.EOF) {
				return nil
			}
			if m.err != nil {
				return m.err
			}
			r = m.req
		case <-s.n.stopped:
			wg.Wait()
			return errStopping
		case <-ctx.Done():
			// The client went away: receiveStream may have ended on it
			// without a last message.
			return ctx.Err()
		}
		arrival := time.Now()
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		after, taken := order.next(r)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			rctx := ctx
			if taken != nil { // a request of a sequence, after the one sent before it
				defer taken()
				rctx = withTurnTaken(ctx, taken)
			}
			if after != nil {
				select {
				case <-after:
				case <-ctx.Done():
					return
				}
			}
			res, held, ierr := s.n.inferGRPC(rctx, r, arrival)
			out := &pb.ModelStreamInferResponse{InferResponse: res}
			if ierr == nil {
				s.n.grpcAnswers.keep(ctx, res, held)
			} else {
				out = &pb.ModelStreamInferResponse{ErrorMessage: ierr.msg,
					InferResponse: &pb.ModelInferResponse{Id: r.Id, ModelName: r.ModelName, ModelVersion: r.ModelVersion,
						Parameters: map[string]*pb.InferParameter{kserve.ParamFailureReason: {ParameterChoice: &pb.InferParameter_StringParam{StringParam: ierr.reason}}}}}
			}
			if out.InferResponse.Parameters == nil {
				out.InferResponse.Parameters = make(map[string]*pb.InferParameter, 1)
			}
			out.InferResponse.Parameters[kserve.ParamFinalResponse] = finalResponse
			send.Lock()
			defer send.Unlock()
			// An error means the stream has ended: nobody is left to answer.
			_ = stream.Send(out)
		}()
	}
}

// finalResponse is ParamFinalResponse's value on every stream answer, as
// Triton sets it for a model that is not decoupled; one value for all
// (marshalling only reads it).
var finalResponse = &pb.InferParameter{ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}

// errStopping ends a stream the daemon holds when it stops.
var errStopping = grpcstatus.Error(codes.Unavailable, "gpuletd is stopping")

// streamed is one message read from a stream, or the error that ended it.
type streamed struct {
	req *pb.ModelInferRequest
	err error
}

// receiveStream reads stream's messages into out until it ends (its error
// the last one sent) or ctx does.
func receiveStream(ctx context.Context, stream pb.GRPCInferenceService_ModelStreamInferServer, out chan<- streamed) {
	for {
		r, err := stream.Recv()
		select {
		case out <- streamed{r, err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// inferGRPC is handleInfer for a gRPC request: the model, the overload
// share, the byte budget, then the shared path, booked as REST books it.
// With its answer it returns what the answer holds beside the request's
// message, to be given back once the gRPC library has sent it
// (grpcAnswers.keep); nil with a failure.
func (n *node) inferGRPC(ctx context.Context, r *pb.ModelInferRequest, arrival time.Time) (res *pb.ModelInferResponse, held *heldAnswer, ierr *inferError) {
	m, ierr := n.lookupModel(r.ModelName, r.ModelVersion)
	if ierr != nil {
		return nil, nil, ierr
	}
	var batch int32
	tr := n.traces.sample(m.Name, m.Family, m.Version, arrival, func() traceContext { return traceContextOfCall(ctx) })
	ctx = withTrace(ctx, tr)
	if ierr = n.begin(m, arrival); ierr == nil {
		var release func()
		size := int64(proto.Size(r))
		// A gRPC server built before a reload changed the limit serves the
		// calls of its connections until they end, with the cap it was
		// built with: a limit lowered since holds here.
		if limit := int64(n.conf().Limits.MaxRequestBody); size > limit {
			ierr = tooLarge(limit)
		} else if release, ierr = n.holdMessage(ctx, m, size, arrival); ierr == nil {
			res, batch, held, ierr = n.runGRPC(ctx, m, r, size, arrival)
			release()
		}
	}
	n.finish(m, arrival, batch, ierr)
	n.traces.done(tr, time.Now(), ierr.message())
	return res, held, ierr
}

// runGRPC decodes, runs and encodes one gRPC request whose message has
// size bytes. What it holds beside the message is given back once the
// gRPC library has sent the answer (answer; with a failure, as runGRPC
// returns).
func (n *node) runGRPC(ctx context.Context, m *repository.Model, r *pb.ModelInferRequest, size int64, arrival time.Time) (res *pb.ModelInferResponse, batch int32, answer *heldAnswer, ierr *inferError) {
	form := formGRPCTyped
	if len(r.RawInputContents) > 0 {
		form = formGRPCRaw
	}
	est := n.besideEstimate(m, form, size)
	held, ierr := n.holdBeside(ctx, m, est, arrival)
	if ierr != nil {
		return nil, 0, nil, ierr
	}
	req, err := kserve.DecodeGRPCRequestWith(r, n.sharedMem())
	if err != nil {
		held()
		return nil, 0, nil, badRequest("%v", err)
	}
	ran, ierr := n.execute(ctx, m, req, arrival)
	if ierr != nil {
		held()
		return nil, 0, nil, ierr
	}
	settled := n.settleBeside(m, form, size, est, req, ran)
	kout, ierr := n.placeOutputs(m, req, ran.outs)
	if ierr != nil {
		settled()
		held()
		return nil, 0, nil, ierr
	}
	return kserve.EncodeGRPCResponse(ran.head(m, req), kout), ran.batch, &heldAnswer{model: m.Name, settled: settled, held: held}, nil
}
