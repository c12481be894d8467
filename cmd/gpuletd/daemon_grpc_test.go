package main

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
)

// liveServer answers ServerLive; the rest is unimplemented.
type liveServer struct {
	pb.UnimplementedGRPCInferenceServiceServer
}

func (liveServer) ServerLive(context.Context, *pb.ServerLiveRequest) (*pb.ServerLiveResponse, error) {
	return &pb.ServerLiveResponse{Live: true}, nil
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// TestGRPCClientsShareAConnection: a command's asks of one gRPC listener go
// over one connection it keeps until closeGRPC, however many there are, a
// daemonAPI made as a literal too.
func TestGRPCClientsShareAConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	counted := &countingListener{Listener: ln}
	srv := grpc.NewServer()
	pb.RegisterGRPCInferenceServiceServer(srv, liveServer{})
	go func() { _ = srv.Serve(counted) }()
	t.Cleanup(srv.Stop)
	addr := ln.Addr().String()
	ctx := context.Background()

	d := plainAPI("http://127.0.0.1:1")
	for range 5 {
		c, err := d.grpcClient(ctx, addr)
		require.NoError(t, err)
		res, err := c.ServerLive(ctx, &pb.ServerLiveRequest{})
		require.NoError(t, err)
		require.True(t, res.Live)
	}
	require.Equal(t, int64(1), counted.accepted.Load(), "one connection for five asks")
	d.closeGRPC()
	_, err = d.grpcClient(ctx, addr)
	require.NoError(t, err)
	require.Equal(t, int64(2), counted.accepted.Load(), "closed: the next ask dials again")
	d.closeGRPC()

	bare := &daemonAPI{base: "http://127.0.0.1:1"}
	for range 2 {
		_, err := bare.grpcClient(ctx, addr)
		require.NoError(t, err)
	}
	require.Equal(t, int64(3), counted.accepted.Load(), "a literal's asks share one connection too")
	bare.closeGRPC()

	_, err = d.grpcClient(ctx, "127.0.0.1:1")
	require.Error(t, err, "nothing listens there")
}
