package daemon

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/peer"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/connlimit"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// answerServer answers every ModelInfer call with size bytes of raw
// output, held by answers until sent as the daemon holds its answers.
type answerServer struct {
	pb.UnimplementedGRPCInferenceServiceServer
	answers  *grpcAnswers
	size     int
	answered atomic.Int64 // calls answered
	released atomic.Int64 // answers given back

	dialedMu sync.Mutex
	dialed   []net.Conn // the client's connections, to cut
}

// cut closes the client's connections under it, as a client that goes
// away does, without ending its calls first.
func (s *answerServer) cut() {
	s.dialedMu.Lock()
	defer s.dialedMu.Unlock()
	for _, c := range s.dialed {
		_ = c.Close()
	}
}

func (s *answerServer) ModelInfer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	res := &pb.ModelInferResponse{ModelName: r.ModelName, Id: r.Id,
		Outputs:           []*pb.ModelInferResponse_InferOutputTensor{{Name: "y", Datatype: "UINT8", Shape: []int64{int64(s.size)}}},
		RawOutputContents: [][]byte{make([]byte, s.size)}}
	s.answers.keep(ctx, res, &heldAnswer{model: r.ModelName, settled: func() { s.released.Add(1) }, held: func() {}})
	s.answered.Add(1)
	return res, nil
}

func (s *answerServer) ModelStreamInfer(stream pb.GRPCInferenceService_ModelStreamInferServer) error {
	for {
		r, err := stream.Recv()
		if err != nil {
			return nil
		}
		res, _ := s.ModelInfer(stream.Context(), r)
		if err := stream.Send(&pb.ModelStreamInferResponse{InferResponse: res}); err != nil {
			return err
		}
	}
}

// serveAnswers serves an answerServer of answers of size bytes whose
// connections may take none of their bytes for stall, and returns it,
// the answers abandoned counter and a client connection to it that reads
// an answer only when asked (a 64 KiB window), closed at the test's end.
func serveAnswers(t *testing.T, size int, stall time.Duration) (*answerServer, *atomic.Int64, *grpc.ClientConn) {
	var abandoned atomic.Int64
	a := &grpcAnswers{stall: func() time.Duration { return stall }, abandoned: func(string) { abandoned.Add(1) },
		log: zap.NewNop(), conns: map[string]*answerConn{}, pending: map[*pb.ModelInferResponse]*heldAnswer{}}
	s := &answerServer{answers: a, size: size}
	srv := grpc.NewServer(grpc.ForceServerCodecV2(newGRPCCodec(a)))
	pb.RegisterGRPCInferenceServiceServer(srv, s)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(a.listener(ln))
	}()
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			s.dialedMu.Lock()
			s.dialed = append(s.dialed, c)
			s.dialedMu.Unlock()
		}
		return c, err
	}
	conn, err := grpc.NewClient("passthrough:///"+ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dial), grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
		<-served
	})
	return s, &abandoned, conn
}

// callUnread opens n ModelInfer calls on conn and reads none of their
// answers: the streams, to read them from.
func callUnread(t *testing.T, ctx context.Context, conn *grpc.ClientConn, n int) []grpc.ClientStream {
	var out []grpc.ClientStream
	for range n {
		s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, pb.GRPCInferenceService_ModelInfer_FullMethodName)
		require.NoError(t, err)
		require.NoError(t, s.SendMsg(&pb.ModelInferRequest{ModelName: "m"}))
		require.NoError(t, s.CloseSend())
		out = append(out, s)
	}
	return out
}

// Answers a gRPC client does not read stay held (in the budget, in the
// daemon) until it reads them, or until its connection ends, by its
// client or because it took none of their bytes for the stall allowed;
// an answer the client reads slowly but steadily is not cut off.
func TestUnreadGRPCAnswersStayHeldUntilSent(t *testing.T) {
	const calls = 8
	const size = 4 << 20 // pieces of answerStep: progress is seen within an answer
	eventually := func(t *testing.T, what string, cond func() bool) {
		require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, what)
	}
	t.Run("held while unread, given back as read", func(t *testing.T) {
		s, abandoned, conn := serveAnswers(t, size, 0)
		streams := callUnread(t, t.Context(), conn, calls)
		eventually(t, "every call answered", func() bool { return s.answered.Load() == calls })
		time.Sleep(100 * time.Millisecond) // the library has had time to send what it could
		require.Zero(t, s.released.Load(), "no answer is sent whole while unread")
		for _, st := range streams {
			var res pb.ModelInferResponse
			require.NoError(t, st.RecvMsg(&res))
			require.Len(t, res.RawOutputContents[0], size)
		}
		eventually(t, "every answer given back once read", func() bool { return s.released.Load() == calls })
		require.Zero(t, abandoned.Load())
	})
	t.Run("given back when the client goes away", func(t *testing.T) {
		s, abandoned, conn := serveAnswers(t, size, 0)
		callUnread(t, t.Context(), conn, calls)
		eventually(t, "every call answered", func() bool { return s.answered.Load() == calls })
		s.cut()
		eventually(t, "every answer given back", func() bool { return s.released.Load() == calls })
		// An answer the library had queued and not yet begun to send
		// when the connection ended is dropped as if sent.
		require.Positive(t, abandoned.Load(), "counted abandoned")
		require.LessOrEqual(t, abandoned.Load(), int64(calls))
	})
	t.Run("a connection that takes nothing is closed", func(t *testing.T) {
		s, abandoned, conn := serveAnswers(t, size, 200*time.Millisecond)
		streams := callUnread(t, t.Context(), conn, calls)
		eventually(t, "every answer given back", func() bool { return s.released.Load() == calls })
		require.Equal(t, int64(calls), abandoned.Load(), "counted abandoned")
		var res pb.ModelInferResponse
		err := streams[0].RecvMsg(&res)
		require.Equal(t, codes.Unavailable, grpcstatus.Code(err), "the client lost its connection: %v", err)
	})
	t.Run("a client that reads slowly keeps its connection", func(t *testing.T) {
		s, abandoned, conn := serveAnswers(t, size, 300*time.Millisecond)
		streams := callUnread(t, t.Context(), conn, calls)
		for _, st := range streams { // 8 x 100 ms: longer than the stall, never that long without a byte
			time.Sleep(100 * time.Millisecond)
			var res pb.ModelInferResponse
			require.NoError(t, st.RecvMsg(&res))
		}
		eventually(t, "every answer given back", func() bool { return s.released.Load() == calls })
		require.Zero(t, abandoned.Load())
	})
	t.Run("an answer in one buffer, held until read", func(t *testing.T) {
		s, abandoned, conn := serveAnswers(t, zeroCopyAnswer-1, 0)
		streams := callUnread(t, t.Context(), conn, 2)
		eventually(t, "every call answered", func() bool { return s.answered.Load() == 2 })
		time.Sleep(100 * time.Millisecond)
		require.Zero(t, s.released.Load(), "a 64 KiB window leaves it unsent")
		for _, st := range streams {
			var res pb.ModelInferResponse
			require.NoError(t, st.RecvMsg(&res))
			require.Len(t, res.RawOutputContents[0], zeroCopyAnswer-1)
		}
		eventually(t, "given back once read", func() bool { return s.released.Load() == 2 })
		require.Zero(t, abandoned.Load())
	})
	for _, size := range []int{size, zeroCopyAnswer - 1} {
		t.Run(fmt.Sprintf("answers of %d bytes on a stream, held until read", size), func(t *testing.T) {
			s, abandoned, conn := serveAnswers(t, size, 0)
			stream, err := pb.NewGRPCInferenceServiceClient(conn).ModelStreamInfer(t.Context())
			require.NoError(t, err)
			for range 3 {
				require.NoError(t, stream.Send(&pb.ModelInferRequest{ModelName: "m"}))
			}
			// The first answer goes out as far as the window lets it and
			// holds the stream's sending; the others wait for it.
			eventually(t, "the first call answered", func() bool { return s.answered.Load() >= 1 })
			time.Sleep(100 * time.Millisecond)
			require.Zero(t, s.released.Load(), "nothing sent whole while unread")
			for range 3 {
				res, err := stream.Recv()
				require.NoError(t, err)
				require.Len(t, res.InferResponse.RawOutputContents[0], size)
			}
			eventually(t, "every answer given back once read", func() bool { return s.released.Load() == 3 })
			require.Zero(t, abandoned.Load())
		})
	}
	t.Run("a small answer is given back as the call returns", func(t *testing.T) {
		s, _, conn := serveAnswers(t, heldAnswerMin-1, 0)
		callUnread(t, t.Context(), conn, 1)
		eventually(t, "given back", func() bool { return s.released.Load() == 1 })
	})
}

// An answer kept for a call that ends without sending it (an
// interceptor's error) is given back when the call ends, not counted
// abandoned; one kept on a connection not held is given back at once.
func TestAGRPCAnswerNeverSentIsGivenBack(t *testing.T) {
	var abandoned, released atomic.Int64
	a := &grpcAnswers{stall: func() time.Duration { return time.Hour }, abandoned: func(string) { abandoned.Add(1) },
		log: zap.NewNop(), conns: map[string]*answerConn{}, pending: map[*pb.ModelInferResponse]*heldAnswer{}}
	client := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5000}
	c := &answerConn{a: a, addr: client.String(), held: map[*heldAnswer]struct{}{}}
	a.conns[c.addr] = c
	res := &pb.ModelInferResponse{RawOutputContents: [][]byte{make([]byte, zeroCopyAnswer)}}
	hold := func() *heldAnswer {
		return &heldAnswer{model: "m", settled: func() { released.Add(1) }, held: func() {}}
	}

	ctx, cancel := context.WithCancel(peer.NewContext(t.Context(), &peer.Peer{Addr: client}))
	a.keep(ctx, res, hold())
	require.Zero(t, released.Load(), "held while the call may still send it")
	cancel()
	require.Eventually(t, func() bool { return released.Load() == 1 }, 5*time.Second, time.Millisecond)
	require.Nil(t, a.take(res), "nothing left for the codec")
	require.Empty(t, c.held)

	other := peer.NewContext(t.Context(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5001}})
	a.keep(other, res, hold())
	require.Equal(t, int64(2), released.Load(), "a connection not held: given back at once")
	a.keep(t.Context(), res, hold())
	require.Equal(t, int64(3), released.Load(), "no peer: given back at once")
	require.Zero(t, abandoned.Load())
	c.timer.Stop()
}

// The daemon's gRPC listener and server hold answers until sent: its
// connections are watched and its codec hands the answers over, so that a
// connection that takes none of its answers' bytes for limits.body_timeout
// is closed and what they held is given back.
func TestTheDaemonsGRPCServerHoldsAnswers(t *testing.T) {
	cfg := config.Default()
	cfg.GRPCListen = "127.0.0.1:0"
	cfg.Limits.BodyTimeout = config.Duration(time.Second)
	n := grpcTestNode(cfg)
	n.log = zap.NewNop()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	n.conns = connlimit.NewListener(tcp, 16)
	defer n.conns.Close()
	n.grpcAnswers = newGRPCAnswers(n)
	ln, err := n.listenGRPC(cfg)
	require.NoError(t, err)
	s := n.newGRPCServer(cfg)
	var answered, released atomic.Int64
	// A service of its own beside the inference service, answered as
	// ModelInfer answers: the listener and the codec are the daemon's.
	s.RegisterService(&grpc.ServiceDesc{ServiceName: "test.Answers", HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Infer", Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			r := new(pb.ModelInferRequest)
			if err := dec(r); err != nil {
				return nil, err
			}
			res := &pb.ModelInferResponse{ModelName: r.ModelName, RawOutputContents: [][]byte{make([]byte, 4<<20)}}
			n.grpcAnswers.keep(ctx, res, &heldAnswer{model: r.ModelName, settled: func() { released.Add(1) }, held: func() {}})
			answered.Add(1)
			return res, nil
		}}}}, struct{}{})
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	defer func() {
		s.Stop()
		require.NoError(t, <-served)
	}()

	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	require.NoError(t, err)
	defer conn.Close()
	st, err := conn.NewStream(t.Context(), &grpc.StreamDesc{ServerStreams: true}, "/test.Answers/Infer")
	require.NoError(t, err)
	require.NoError(t, st.SendMsg(&pb.ModelInferRequest{ModelName: "m"}))
	require.NoError(t, st.CloseSend())
	require.Eventually(t, func() bool { return answered.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	require.Zero(t, released.Load(), "held while unread, after its call has ended")
	require.Eventually(t, func() bool { return released.Load() == 1 }, 10*time.Second, 5*time.Millisecond,
		"given back once the connection that took nothing is closed")
	var res pb.ModelInferResponse
	require.Equal(t, codes.Unavailable, grpcstatus.Code(st.RecvMsg(&res)))
	require.Equal(t, 1.0, testutil.ToFloat64(n.metrics.grpcAbandoned.WithLabelValues("m")), "counted abandoned")
}
