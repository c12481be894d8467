package daemon

import (
	"context"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// grpcChecks are the gRPC calls a connection over limits.max_connections
// may still make (it is in the listener's reserve): health checks, the
// standard protocol's and the inference service's.
var grpcChecks = map[string]bool{
	"/grpc.health.v1.Health/Check":                true,
	"/grpc.health.v1.Health/List":                 true,
	"/grpc.health.v1.Health/Watch":                true,
	"/inference.GRPCInferenceService/ServerLive":  true,
	"/inference.GRPCInferenceService/ServerReady": true,
	"/inference.GRPCInferenceService/ModelReady":  true,
}

// errOverCap is a call other than a health check on a connection over the
// cap: UNAVAILABLE with RetryInfo, as the HTTP listener's 503 with
// Retry-After.
var errOverCap = func() error {
	st := grpcstatus.New(codes.Unavailable, "too many open connections to gpuletd (limits.max_connections); retry shortly")
	if d, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(retryDelay)}); err == nil {
		st = d
	}
	return st.Err()
}()

// overCap says whether a call to method on ctx's connection is refused,
// and counts it refused: the connection is over limits.max_connections, and
// the call is no health check (connlimit's reserve keeps such connections
// for those).
func (n *node) overCap(ctx context.Context, method string) bool {
	if n.conns == nil || grpcChecks[method] {
		return false
	}
	p, ok := peer.FromContext(ctx)
	if !ok || !n.conns.Reserved(p.Addr) {
		return false
	}
	n.conns.Refuse(p.Addr)
	return true
}

// grpcOverCap refuses unary calls over the cap that are not health checks.
func (n *node) grpcOverCap(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	if n.overCap(ctx, info.FullMethod) {
		return nil, errOverCap
	}
	return next(ctx, req)
}

// grpcStreamOverCap refuses streams over the cap that are not health
// checks.
func (n *node) grpcStreamOverCap(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
	if n.overCap(ss.Context(), info.FullMethod) {
		return errOverCap
	}
	return next(srv, ss)
}
