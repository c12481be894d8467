package daemon

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcstatus "google.golang.org/grpc/status"

	pb "github.com/gpulet/gpuletd/kserve/inferencepb"
)

// The services gRPC's health protocol (grpc.health.v1.Health) answers for:
// load balancers and Kubernetes' gRPC probes ask for "" by default.
const (
	// healthLiveness is SERVING while the process answers, as
	// /v2/health/live: for a liveness probe, which must not restart a
	// daemon that is still profiling its models.
	healthLiveness = "liveness"
	// healthReadiness is SERVING while the server is ready, as
	// /v2/health/ready; "" and the inference service's own name are the
	// same.
	healthReadiness = "readiness"
)

// healthWatchEvery is how often a Watch looks at the server's readiness
// again; it ends with NOT_SERVING once the daemon stops.
const healthWatchEvery = 500 * time.Millisecond

// grpcHealth serves gRPC's standard health protocol from the daemon's own
// liveness and readiness, so that tools that speak only it (Kubernetes'
// gRPC probes, grpc-health-probe, cloud load balancers, gRPC clients'
// health checking) can watch the gRPC listener.
type grpcHealth struct {
	healthpb.UnimplementedHealthServer
	n *node
}

// status is service's serving status; false when the service is none of
// those the daemon answers for.
func (h *grpcHealth) status(service string) (healthpb.HealthCheckResponse_ServingStatus, bool) {
	switch service {
	case healthLiveness:
		if h.n.stopping.Load() {
			return healthpb.HealthCheckResponse_NOT_SERVING, true
		}
		return healthpb.HealthCheckResponse_SERVING, true
	case "", healthReadiness, pb.GRPCInferenceService_ServiceDesc.ServiceName:
		if ready, _, _ := h.n.readiness(); ready {
			return healthpb.HealthCheckResponse_SERVING, true
		}
		return healthpb.HealthCheckResponse_NOT_SERVING, true
	}
	return healthpb.HealthCheckResponse_SERVICE_UNKNOWN, false
}

// Check answers the service's status now; NOT_FOUND for a service the
// daemon does not answer for, as the protocol asks.
func (h *grpcHealth) Check(_ context.Context, r *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	st, ok := h.status(r.Service)
	if !ok {
		return nil, grpcstatus.Errorf(codes.NotFound, "unknown service %q: gpuletd answers for %q (readiness, also %q and %q) and %q",
			r.Service, "", healthReadiness, pb.GRPCInferenceService_ServiceDesc.ServiceName, healthLiveness)
	}
	return &healthpb.HealthCheckResponse{Status: st}, nil
}

// List answers every service the daemon answers for with its status.
func (h *grpcHealth) List(context.Context, *healthpb.HealthListRequest) (*healthpb.HealthListResponse, error) {
	out := &healthpb.HealthListResponse{Statuses: map[string]*healthpb.HealthCheckResponse{}}
	for _, s := range []string{"", healthReadiness, pb.GRPCInferenceService_ServiceDesc.ServiceName, healthLiveness} {
		st, _ := h.status(s)
		out.Statuses[s] = &healthpb.HealthCheckResponse{Status: st}
	}
	return out, nil
}

// Watch sends the service's status, then each change of it, until the
// client goes or the daemon stops (its last message then NOT_SERVING). A
// service the daemon does not answer for is SERVICE_UNKNOWN, as the
// protocol asks, and stays so.
func (h *grpcHealth) Watch(r *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	tick := time.NewTicker(healthWatchEvery)
	defer tick.Stop()
	sent := healthpb.HealthCheckResponse_ServingStatus(-1)
	for {
		// Read before the status, so that the status of a stop is sent
		// before the watch ends.
		stopping := h.n.stopping.Load()
		st, _ := h.status(r.Service)
		if st != sent {
			if err := stream.Send(&healthpb.HealthCheckResponse{Status: st}); err != nil {
				return err
			}
			sent = st
		}
		if stopping {
			return nil
		}
		select {
		case <-stream.Context().Done():
			return stream.Context().Err()
		case <-tick.C:
		}
	}
}
