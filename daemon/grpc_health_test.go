package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcstatus "google.golang.org/grpc/status"
)

// TestGRPCHealthFollowsReadiness: gRPC's health protocol answers readiness
// for "" (what probes ask by default), "readiness" and the inference
// service, liveness for "liveness", NOT_FOUND for any other service.
func TestGRPCHealthFollowsReadiness(t *testing.T) {
	n, lat := twoModelNode(t, nil)
	h := &grpcHealth{n: n}
	check := func(service string) (healthpb.HealthCheckResponse_ServingStatus, codes.Code) {
		res, err := h.Check(context.Background(), &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			return healthpb.HealthCheckResponse_UNKNOWN, grpcstatus.Code(err)
		}
		return res.Status, codes.OK
	}
	const (
		serving    = healthpb.HealthCheckResponse_SERVING
		notServing = healthpb.HealthCheckResponse_NOT_SERVING
	)
	readinessNames := []string{"", "readiness", "inference.GRPCInferenceService"}
	for _, s := range readinessNames {
		require.Equal(t, notServing, first(check(s)), "%q while a and b wait for a gpu-let", s)
	}
	require.Equal(t, serving, first(check("liveness")), "live while it waits")
	_, code := check("inference.Other")
	require.Equal(t, codes.NotFound, code)

	g := &gpuletRun{id: "g"}
	n.router.install(map[string][]routeEntry{"a": {{g: g, weight: 1, lat: lat}}, "b": {{g: g, weight: 1, lat: lat}}})
	n.ready.Store(true)
	for _, s := range readinessNames {
		require.Equal(t, serving, first(check(s)), "%q once every model serves", s)
	}
	list, err := h.List(context.Background(), &healthpb.HealthListRequest{})
	require.NoError(t, err)
	require.Len(t, list.Statuses, 4)
	for s, st := range list.Statuses {
		require.Equal(t, serving, st.Status, s)
	}

	n.stopping.Store(true)
	for _, s := range append(readinessNames, "liveness") {
		require.Equal(t, notServing, first(check(s)), "%q while stopping", s)
	}
}

func first[A, B any](a A, _ B) A { return a }

// watchStream is a Health.Watch stream that keeps what is sent.
type watchStream struct {
	grpc.ServerStream
	ctx  context.Context
	sent chan healthpb.HealthCheckResponse_ServingStatus
}

func (w *watchStream) Context() context.Context { return w.ctx }

func (w *watchStream) Send(r *healthpb.HealthCheckResponse) error {
	w.sent <- r.Status
	return nil
}

// TestGRPCHealthWatch: a watch gets the status at once, then each change,
// and ends with NOT_SERVING when the daemon stops, so that stopping the
// gRPC server does not wait on it.
func TestGRPCHealthWatch(t *testing.T) {
	n, lat := twoModelNode(t, nil)
	h := &grpcHealth{n: n}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &watchStream{ctx: ctx, sent: make(chan healthpb.HealthCheckResponse_ServingStatus, 8)}
	done := make(chan error, 1)
	go func() { done <- h.Watch(&healthpb.HealthCheckRequest{}, s) }()
	next := func() healthpb.HealthCheckResponse_ServingStatus {
		select {
		case st := <-s.sent:
			return st
		case <-time.After(10 * time.Second):
			return healthpb.HealthCheckResponse_UNKNOWN
		}
	}
	require.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, next(), "at once")
	g := &gpuletRun{id: "g"}
	n.router.install(map[string][]routeEntry{"a": {{g: g, weight: 1, lat: lat}}, "b": {{g: g, weight: 1, lat: lat}}})
	n.ready.Store(true)
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, next(), "once ready")
	n.stopping.Store(true)
	require.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, next(), "stopping")
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end when the daemon stopped")
	}
	require.NoError(t, err)
	require.Empty(t, s.sent, "nothing sent but the changes")
}
