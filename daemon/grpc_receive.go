package daemon

import (
	"context"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/tap"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// grpcReceiveDeadline gives a gRPC call limits.body_timeout to send its
// request, as REST's requests have: a unary call whose message has not
// arrived whole by then (a client that stalls, or trickles a large message)
// is cancelled, and what it held (a goroutine, the message's bytes so far)
// is given back. The gRPC library has no such bound of its own.
//
// The tap (receiveTap) wraps the stream's context before gRPC reads the
// message, so that cancelling it ends the read; the first unary interceptor
// (received) stops the timer once the message is in. (A stats handler would
// see the message arrive too, but makes gRPC allocate its reports on every
// call: 27 more objects per request.) Streaming calls (ModelStreamInfer,
// the health protocol's Watch, reflection) are left alone: a client may
// open a stream well before its first request.
type grpcReceiveDeadline struct {
	n *node
	// unary are the full names of the calls that take one message.
	unary map[string]bool
}

// newGRPCReceiveDeadline covers the unary calls of the inference and
// health services.
func newGRPCReceiveDeadline(n *node) *grpcReceiveDeadline {
	d := &grpcReceiveDeadline{n: n, unary: map[string]bool{}}
	for _, sd := range []grpc.ServiceDesc{pb.GRPCInferenceService_ServiceDesc, healthpb.Health_ServiceDesc} {
		for _, m := range sd.Methods {
			d.unary["/"+sd.ServiceName+"/"+m.MethodName] = true
		}
	}
	return d
}

// receiveTimerKey keys the timer of a call's receive deadline in its
// context.
type receiveTimerKey struct{}

// receiveTap starts the receive deadline of a unary call.
func (d *grpcReceiveDeadline) receiveTap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if !d.unary[info.FullMethodName] {
		return ctx, nil
	}
	limit := d.n.conf().Limits.BodyTimeout.D()
	ctx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(limit, func() {
		if ctx.Err() != nil {
			return // the call ended first (refused before its handler ran)
		}
		cancel()
		fields := []zap.Field{zap.String("method", info.FullMethodName), zap.Duration("body_timeout", limit)}
		if p, ok := peer.FromContext(ctx); ok {
			fields = append(fields, zap.Stringer("client", p.Addr))
		}
		d.n.accessLogger().Info("grpc call cancelled: its request was not received within limits.body_timeout", fields...)
	})
	return context.WithValue(ctx, receiveTimerKey{}, timer), nil
}

// received is the first unary interceptor: it runs once the call's message
// is in, and stops its receive deadline.
func (d *grpcReceiveDeadline) received(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	if timer, ok := ctx.Value(receiveTimerKey{}).(*time.Timer); ok {
		timer.Stop()
	}
	return next(ctx, req)
}
