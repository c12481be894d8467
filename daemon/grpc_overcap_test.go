package daemon

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/gpulet/gpuletd/daemon/connlimit"
)

// A gRPC connection over limits.max_connections (in the listener's
// reserve) may make health checks, and nothing else: a Kubernetes gRPC
// probe is answered while HTTP clients fill the cap, and a flood of calls
// is refused UNAVAILABLE with RetryInfo. Before, every gRPC connection over
// the cap was closed at once, probes included.
func TestGRPCOverTheCapAnswersHealthChecksAlone(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	other, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	conns := connlimit.NewListener(inner, 1)
	grpcLn := conns.Beside(other)
	t.Cleanup(func() { _ = conns.Close(); _ = grpcLn.Close() })
	var clients, served []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", other.Addr().String())
		require.NoError(t, err)
		s, err := grpcLn.Accept()
		require.NoError(t, err)
		clients, served = append(clients, c), append(served, s)
	}
	t.Cleanup(func() {
		for _, c := range append(clients, served...) {
			_ = c.Close()
		}
	})
	n := &node{conns: conns}
	within, over := served[0], served[1]

	tests := []struct {
		name    string
		conn    net.Conn
		method  string
		refused bool
	}{
		{"within the cap, inference", within, "/inference.GRPCInferenceService/ModelInfer", false},
		{"over the cap, inference", over, "/inference.GRPCInferenceService/ModelInfer", true},
		{"over the cap, a stream", over, "/inference.GRPCInferenceService/ModelStreamInfer", true},
		{"over the cap, the health protocol", over, "/grpc.health.v1.Health/Check", false},
		{"over the cap, server ready", over, "/inference.GRPCInferenceService/ServerReady", false},
		{"over the cap, model ready", over, "/inference.GRPCInferenceService/ModelReady", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: tc.conn.RemoteAddr()})
			called := false
			_, err := n.grpcOverCap(ctx, nil, &grpc.UnaryServerInfo{FullMethod: tc.method}, func(context.Context, any) (any, error) {
				called = true
				return nil, nil
			})
			require.Equal(t, !tc.refused, called)
			if !tc.refused {
				require.NoError(t, err)
				return
			}
			st, _ := grpcstatus.FromError(err)
			require.Equal(t, codes.Unavailable, st.Code())
			require.Contains(t, st.Message(), "limits.max_connections")
			require.NotEmpty(t, st.Details(), "RetryInfo")
		})
	}
	require.EqualValues(t, 2, conns.Refused(), "the calls refused are counted")
}
