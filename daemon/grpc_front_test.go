package daemon

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/connlimit"
	"github.com/gpulet/gpuletd/daemon/repository"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpcstatus "google.golang.org/grpc/status"
)

// grpcTestNode is a node of one model, m (askModel), with no gpu-let,
// under cur, for its gRPC server.
func grpcTestNode(cur config.Config) *node {
	n := &node{sup: &supervisor{}, reloaded: make(chan struct{}, 1), bodies: connlimit.NewBudget(int64(cur.Limits.MaxInflightBytes)),
		router: newRouter(), rates: newRateMeter(0.5, time.Now()), stopped: make(chan struct{}),
		catalog: &catalog{models: map[string]*repository.Model{"m": askModel()}, pipelines: map[string]*repository.Model{}}}
	n.metrics = newMetrics(n)
	n.cfg.Store(&cur)
	return n
}

// A reload that raises limits.max_request_body raises the gRPC server's
// message cap: a message over the old cap, refused before, is taken on the
// same client connection after it (the client reconnects on the old
// server's GOAWAY), while a stream opened before it keeps its connection
// until it ends, and the old server ends then.
func TestReloadRenewsTheGRPCMessageCap(t *testing.T) {
	cur := config.Default()
	cur.Limits.MaxRequestBody = 64 << 10
	cur.Limits.MaxInflightBytes = 1 << 20
	n := grpcTestNode(cur)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	n.grpc = newGRPCFront(ln, func() *grpc.Server { return n.newGRPCServer(*n.conf()) })
	served := make(chan error, 1)
	go func() { served <- n.grpc.serve() }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n.grpc.stop(ctx)
		require.NoError(t, <-served)
	}()

	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	c := pb.NewGRPCInferenceServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	big := &pb.ModelMetadataRequest{Name: strings.Repeat("m", 100<<10)} // over 64 KiB, under 256
	_, err = c.ModelMetadata(ctx, big)
	require.Equal(t, codes.ResourceExhausted, grpcstatus.Code(err), "%v", err)
	stream, err := c.ModelStreamInfer(ctx)
	require.NoError(t, err)
	_, err = c.ServerLive(ctx, &pb.ServerLiveRequest{}) // the stream is open on the server
	require.NoError(t, err)

	next := cur
	next.Limits.MaxRequestBody = 256 << 10
	applied, restart := n.reload(&next)
	require.Equal(t, []string{"limits.max_request_body"}, applied)
	require.Empty(t, restart, "nothing of it waits for a restart")

	// A call that raced the old server's GOAWAY may still meet the old cap.
	require.Eventually(t, func() bool {
		_, err = c.ModelMetadata(ctx, big)
		return grpcstatus.Code(err) == codes.NotFound
	}, 10*time.Second, 10*time.Millisecond, "the message is taken, and its model is not found: %v", err)

	left := make(chan struct{})
	go func() { n.grpc.leaving.Wait(); close(left) }()
	select {
	case <-left:
		t.Fatal("the old server ended with a stream still open on it")
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, stream.CloseSend())
	_, err = stream.Recv()
	require.True(t, errors.Is(err, io.EOF), "the stream ends as its client closed it, not cut: %v", err)
	select {
	case <-left:
	case <-time.After(10 * time.Second):
		t.Fatal("the old server did not end after its last stream")
	}
	n.grpc.mu.Lock()
	require.Empty(t, n.grpc.retired, "an ended server is let go")
	n.grpc.mu.Unlock()
}

// A stream whose client goes away while it waits for the next request
// ends: the server's graceful stop, which waits for every call, returns.
// (Each stream's end raced its reader's: half of them were left waiting
// for a message that would never come.)
func TestAStreamEndsWhenItsClientGoesAway(t *testing.T) {
	cur := config.Default()
	n := grpcTestNode(cur)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := n.newGRPCServer(cur)
	go func() { _ = s.Serve(ln) }()

	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	c := pb.NewGRPCInferenceServiceClient(conn)
	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := c.ModelStreamInfer(ctx)
		require.NoError(t, err)
		_, err = c.ServerLive(context.Background(), &pb.ServerLiveRequest{}) // the stream is open on the server
		require.NoError(t, err)
		cancel()
	}
	stopped := make(chan struct{})
	go func() { s.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		s.Stop()
		t.Fatal("streams whose clients went away still held the server")
	}
}

// temporaryOnce is a listener whose first Accept fails as running out of
// open files does.
type temporaryOnce struct {
	net.Listener
	failed atomic.Bool
}

func (l *temporaryOnce) Accept() (net.Conn, error) {
	if !l.failed.Swap(true) {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// An accept that fails for a while (no file descriptor left) does not
// stop the gRPC listener: it accepts again after a pause.
func TestGRPCFrontOutlastsATemporaryAcceptError(t *testing.T) {
	n := grpcTestNode(config.Default())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	n.grpc = newGRPCFront(&temporaryOnce{Listener: ln}, func() *grpc.Server { return n.newGRPCServer(*n.conf()) })
	served := make(chan error, 1)
	go func() { served <- n.grpc.serve() }()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = pb.NewGRPCInferenceServiceClient(conn).ServerLive(ctx, &pb.ServerLiveRequest{})
	require.NoError(t, err)
	n.grpc.stop(ctx)
	require.NoError(t, <-served)
}
