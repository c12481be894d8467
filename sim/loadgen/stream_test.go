package loadgen

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// fakeGRPC answers ModelStreamInfer out of order (a request whose id is
// even waits 5 ms, an odd one does not) and fails every fifth with a
// stream error that gives gpuletd's reason; ModelInfer fails every third
// call with UNAVAILABLE and an ErrorInfo.
type fakeGRPC struct {
	pb.UnimplementedGRPCInferenceServiceServer
	calls, streamed atomic.Int64
	streams         atomic.Int64
	mu              sync.Mutex
	ids             map[string]bool
	dup             bool
}

func (f *fakeGRPC) ModelInfer(context.Context, *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	if f.calls.Add(1)%3 == 0 {
		st, err := status.New(codes.Unavailable, "m: the deadline cannot be met").WithDetails(&errdetails.ErrorInfo{Reason: "deadline", Domain: kserve.ErrorDomain})
		if err != nil {
			return nil, err
		}
		return nil, st.Err()
	}
	return &pb.ModelInferResponse{ModelName: "m"}, nil
}

func (f *fakeGRPC) ModelStreamInfer(stream pb.GRPCInferenceService_ModelStreamInferServer) error {
	f.streams.Add(1)
	var wg sync.WaitGroup
	defer wg.Wait()
	var send sync.Mutex
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		n := f.streamed.Add(1)
		f.mu.Lock()
		f.dup = f.dup || f.ids[r.Id]
		f.ids[r.Id] = true
		f.mu.Unlock()
		id, _ := strconv.Atoi(r.Id)
		wg.Go(func() {
			if id%2 == 0 {
				time.Sleep(5 * time.Millisecond)
			}
			out := &pb.ModelStreamInferResponse{InferResponse: &pb.ModelInferResponse{Id: r.Id, ModelName: "m"}}
			if n%5 == 0 {
				out.ErrorMessage = "m: overloaded"
				out.InferResponse.Parameters = map[string]*pb.InferParameter{kserve.ParamFailureReason: {ParameterChoice: &pb.InferParameter_StringParam{StringParam: "queue_full"}}}
			}
			send.Lock()
			defer send.Unlock()
			_ = stream.Send(out)
		})
	}
}

func serveFakeGRPC(t *testing.T, f *fakeGRPC) string {
	t.Helper()
	f.ids = map[string]bool{}
	return serveGRPC(t, f)
}

// serveGRPC serves impl on a port of its own until the test ends, and
// gives its address.
func serveGRPC(t *testing.T, impl pb.GRPCInferenceServiceServer) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := grpc.NewServer()
	pb.RegisterGRPCInferenceServiceServer(s, impl)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return ln.Addr().String()
}

// Streamed requests go over one stream, each with an id of its own, and
// are matched with their answers whatever order those come in; a failed
// answer counts under the reason it gives. Over calls, a failure counts
// under its code and gpuletd's reason.
func TestStreamingAndGRPCFailureReasons(t *testing.T) {
	f := &fakeGRPC{}
	addr := serveFakeGRPC(t, f)
	payload := &Payload{Body: []byte(`{"inputs":[{"name":"x","datatype":"FP32","shape":[1,1],"data":[1]}]}`), JSONLen: -1}
	base := Config{URL: "http://127.0.0.1:1", GRPC: addr, Model: "m", Rate: 400, Duration: 500 * time.Millisecond, Seed: 2, Payload: payload, SLO: time.Second}

	cfg := base
	cfg.Streaming = true
	rep, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	require.True(t, rep.Streaming)
	require.Equal(t, int64(1), f.streams.Load(), "one stream for the run")
	require.Equal(t, rep.Sent, f.streamed.Load())
	require.Zero(t, f.calls.Load())
	require.False(t, f.dup, "every request has an id of its own")
	require.Equal(t, rep.Sent/5, rep.Failed["stream queue_full"], "%v", rep.Failed)
	require.Equal(t, rep.Sent-rep.Sent/5, rep.OK, "every other request answered, out of order as they came: %v", rep.Failed)
	require.Len(t, rep.Failed, 1, "%v", rep.Failed)

	rep, err = Run(context.Background(), base)
	require.NoError(t, err)
	require.False(t, rep.Streaming)
	require.Equal(t, rep.Sent/3, rep.Failed["Unavailable deadline"], "%v", rep.Failed)
	require.Len(t, rep.Failed, 1, "%v", rep.Failed)

	cfg = base
	cfg.Streaming, cfg.GRPC = true, ""
	_, err = Run(context.Background(), cfg)
	require.ErrorIs(t, err, ErrConfig)
	require.ErrorContains(t, err, "streaming is a gRPC stream")
}

// A stream that ends fails the requests waiting on it, and those after,
// with why; a request whose wait ends is forgotten.
func TestStreamEndsWaits(t *testing.T) {
	f := &fakeGRPC{}
	addr := serveFakeGRPC(t, f)
	conn, c, err := DialGRPC(context.Background(), addr, nil, nil)
	require.NoError(t, err)
	defer conn.Close()
	s, err := openStream(context.Background(), c)
	require.NoError(t, err)
	res, err := s.infer(context.Background(), &pb.ModelInferRequest{ModelName: "m"})
	require.NoError(t, err)
	require.Equal(t, "1", res.InferResponse.Id)
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err = s.infer(ctx, &pb.ModelInferRequest{ModelName: "m"}) // id 2: answered after 5 ms
	require.ErrorIs(t, err, context.DeadlineExceeded)
	s.close()
	_, err = s.infer(context.Background(), &pb.ModelInferRequest{ModelName: "m"})
	require.ErrorIs(t, err, errStreamEnded)
	s.mu.Lock()
	require.Empty(t, s.waiting, "no wait is left behind")
	s.mu.Unlock()
}
