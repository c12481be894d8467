package daemon

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/kserve"
	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// grpcTestServer serves n's gRPC API on a loopback port of its own, with
// limits.body_timeout set to timeout; it stops with the test.
func grpcTestServer(t *testing.T, n *node, timeout time.Duration) string {
	t.Helper()
	cfg := *n.conf()
	cfg.GRPCListen = "127.0.0.1:0"
	cfg.Limits.BodyTimeout = config.Duration(timeout)
	n.cfg.Store(&cfg)
	s := n.newGRPCServer(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Stop()
		require.NoError(t, <-served)
	})
	return ln.Addr().String()
}

// A client that sends a call's headers and part of its message, then
// stalls, is cancelled once limits.body_timeout has passed, as a REST
// client is answered 408: the gRPC library alone would wait for the rest
// as long as the connection lives.
func TestGRPCCallMustArriveWithinTheBodyTimeout(t *testing.T) {
	n, _ := twoModelNode(t, nil)
	n.log = zap.NewNop()
	addr := grpcTestServer(t, n, 300*time.Millisecond)

	// A raw HTTP/2 client: gRPC's own client cannot send half a message.
	var h2c http.Protocols
	h2c.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &h2c}
	defer tr.CloseIdleConnections()
	body, send := io.Pipe()
	defer send.Close()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/inference.GRPCInferenceService/ModelInfer", body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			resp = nil
		}
		answered <- resp
	}()
	frame := make([]byte, 5, 8)
	binary.BigEndian.PutUint32(frame[1:], 100)  // a 100-byte message…
	_, err = send.Write(append(frame, 1, 2, 3)) // …of which 3 bytes come
	require.NoError(t, err)

	var resp *http.Response
	select {
	case resp = <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("the stalled call was not ended")
	}
	require.NotNil(t, resp)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	status := resp.Trailer.Get("Grpc-Status")
	if status == "" {
		status = resp.Header.Get("Grpc-Status") // a trailers-only answer
	}
	require.Equal(t, "1", status, "CANCELLED")
}

// A call whose message arrives in time is not touched by the timer, however
// long it then runs; a stream may wait longer than the body timeout before
// its first request.
func TestGRPCBodyTimeoutSparesPromptCallsAndStreams(t *testing.T) {
	n, _ := twoModelNode(t, nil)
	n.log = zap.NewNop()
	addr := grpcTestServer(t, n, 300*time.Millisecond)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	c := pb.NewGRPCInferenceServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for range 3 {
		live, err := c.ServerLive(ctx, &pb.ServerLiveRequest{})
		require.NoError(t, err)
		require.True(t, live.Live)
		time.Sleep(200 * time.Millisecond) // together past the timeout
	}
	stream, err := c.ModelStreamInfer(ctx)
	require.NoError(t, err)
	time.Sleep(600 * time.Millisecond)
	require.NoError(t, stream.Send(&pb.ModelInferRequest{ModelName: "nosuch"}))
	res, err := stream.Recv()
	require.NoError(t, err, "the stream outlived the body timeout")
	require.Contains(t, res.ErrorMessage, "nosuch")
	require.Equal(t, reasonUnknownModel, res.GetInferResponse().GetParameters()[kserve.ParamFailureReason].GetStringParam(), "the reason, as REST's header gives it")
	require.NoError(t, stream.CloseSend())
	_, err = stream.Recv()
	require.Equal(t, io.EOF, err)
}

// The server tells each connection, in its first SETTINGS, how many calls it
// may have open at once (grpcStreamsPerConnection; the gRPC library's own
// default is 2^32 − 1).
func TestGRPCBoundsStreamsPerConnection(t *testing.T) {
	n, _ := twoModelNode(t, nil)
	n.log = zap.NewNop()
	addr := grpcTestServer(t, n, time.Second)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(c, http2.ClientPreface)
	require.NoError(t, err)
	fr := http2.NewFramer(c, c)
	require.NoError(t, fr.WriteSettings())
	f, err := fr.ReadFrame()
	require.NoError(t, err)
	settings, ok := f.(*http2.SettingsFrame)
	require.True(t, ok, "the server's first frame is its SETTINGS, not %T", f)
	v, ok := settings.Value(http2.SettingMaxConcurrentStreams)
	require.True(t, ok, "SETTINGS_MAX_CONCURRENT_STREAMS is sent")
	require.Equal(t, uint32(grpcStreamsPerConnection), v)
}
