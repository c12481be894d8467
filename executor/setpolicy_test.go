package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
)

// A running executor switches its policy when told (a reload of the
// daemon's configuration): a request a timeout policy holds for batching is
// served at once after a switch to eager, without restarting anything.
func TestSetPolicySwitchesARunningExecutor(t *testing.T) {
	f := &fakeRuntime{base: time.Millisecond}
	_, c := startFakeServer(t, f, "timeout:9s")
	// A lone request waits 9 s for company.
	_, err := c.LoadModel(context.Background(), &pb.LoadModelRequest{Name: "double", Path: "ok", MaxBatchSize: 8, SloUs: (10 * time.Second).Microseconds(),
		Latency: []*pb.LatencyPoint{{Batch: 1, Ms: 1}, {Batch: 8, Ms: 1}}})
	require.NoError(t, err)

	answered := make(chan *pb.InferResponse, 1)
	go func() {
		r, _ := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
		answered <- r
	}()
	select {
	case <-answered:
		t.Fatal("a held request was answered at once")
	case <-time.After(200 * time.Millisecond):
	}

	require.NoError(t, c.SetPolicy(context.Background(), "eager"))
	select {
	case r := <-answered:
		require.NotNil(t, r)
		require.Equal(t, pb.Code_OK, r.Code, r.Error)
	case <-time.After(5 * time.Second):
		t.Fatal("the held request was not served after the switch to eager")
	}

	err = c.SetPolicy(context.Background(), "sometimes")
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	require.ErrorContains(t, err, "sometimes")
}
