package daemon

import (
	"context"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
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
// message, so that cancelling it ends the read; the stats handler
// (HandleRPC) stops the timer once the message is in. Streaming calls
// (ModelStreamInfer, the health protocol's Watch, reflection) are left
// alone: a client may open a stream well before its first request.
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
		cancel()
		fields := []zap.Field{zap.String("method", info.FullMethodName), zap.Duration("body_timeout", limit)}
		if p, ok := peer.FromContext(ctx); ok {
			fields = append(fields, zap.Stringer("client", p.Addr))
		}
		d.n.accessLogger().Info("grpc call cancelled: its request was not received within limits.body_timeout", fields...)
	})
	return context.WithValue(ctx, receiveTimerKey{}, timer), nil
}

// TagRPC keeps the context as the tap made it.
func (d *grpcReceiveDeadline) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}

// HandleRPC stops the receive deadline once the message is in, or the call
// ended first.
func (d *grpcReceiveDeadline) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch s.(type) {
	case *stats.InPayload, *stats.End:
		if timer, ok := ctx.Value(receiveTimerKey{}).(*time.Timer); ok {
			timer.Stop()
		}
	}
}

// TagConn keeps the connection's context.
func (d *grpcReceiveDeadline) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}

// HandleConn does nothing: the deadline is per call.
func (d *grpcReceiveDeadline) HandleConn(context.Context, stats.ConnStats) {}
