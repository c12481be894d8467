package daemon

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpcstatus "google.golang.org/grpc/status"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// An event stream a reader holds open (the admin page, gpuletd events -f)
// ends when the daemon stops, and one asked for after that sends its
// history and ends: the HTTP server's graceful stop waited for it until
// its grace ran out, and the executors were then stopped with none left.
func TestEventStreamEndsWhenTheDaemonStops(t *testing.T) {
	n := eventsNode(t, 3)
	n.stopped = make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(n.handleAdminEventStream))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	open := func() *http.Response {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	resp := open()
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for seen := 0; seen < 3 && sc.Scan(); {
		if len(sc.Text()) > 3 && sc.Text()[:3] == "id:" {
			seen++
		}
	}
	n.beginStop()
	_, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err, "the stream ended whole when the daemon stopped")

	late := open()
	defer late.Body.Close()
	body, err := io.ReadAll(late.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), "id: 3\n", "a stream asked for while stopping sends its history, then ends")
}

// A ModelStreamInfer stream held open ends UNAVAILABLE when the daemon
// stops, after answering what it runs; the gRPC server's graceful stop
// waited for it as for the event stream.
func TestModelStreamEndsWhenTheDaemonStops(t *testing.T) {
	n, _ := twoModelNode(t, nil)
	n.log = zap.NewNop()
	n.events = newEvents(nil, zap.NewNop())
	n.stopped = make(chan struct{})
	addr := grpcTestServer(t, n, time.Second)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := pb.NewGRPCInferenceServiceClient(conn).ModelStreamInfer(ctx)
	require.NoError(t, err)
	require.NoError(t, stream.Send(&pb.ModelInferRequest{ModelName: "nosuch", Id: "1"}))
	res, err := stream.Recv()
	require.NoError(t, err)
	require.Equal(t, "1", res.InferResponse.Id)

	n.beginStop()
	_, err = stream.Recv()
	require.Equal(t, codes.Unavailable, grpcstatus.Code(err), "%v", err)
	require.Contains(t, err.Error(), "gpuletd is stopping")
}
