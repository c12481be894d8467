package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/internal/monoclock"
)

// A request is due when the daemon says, even past its model's SLO (a
// pipeline's step, due when the pipeline's SLO leaves it): queued behind a
// batch that ends after the SLO has passed, it is served, where one due at
// the SLO (no deadline sent, or that one) is refused.
func TestARequestsOwnDeadlineStandsPastTheSLO(t *testing.T) {
	const batch, slo = 200 * time.Millisecond, 300 * time.Millisecond
	for _, tc := range []struct {
		name     string
		deadline time.Duration // after it is sent; 0: none sent
		want     pb.Code
	}{
		{"no deadline: the SLO", 0, pb.Code_DEADLINE},
		{"at the SLO", slo, pb.Code_DEADLINE},
		{"past the SLO", 3 * time.Second, pb.Code_OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRuntime{base: batch}
			c := startFake(t, f, "eager")
			loadDouble(t, c, "double", slo, 1)
			first := make(chan *pb.InferResponse, 1)
			go func() {
				r, _ := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)}})
				first <- r
			}()
			require.Eventually(t, func() bool { return len(f.batchSizes()) > 0 }, 5*time.Second, time.Millisecond, "the first batch runs")
			// Behind it: free at 200 ms at the earliest, done at 400 ms.
			req := &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 1)}}
			if tc.deadline > 0 {
				req.DeadlineMonoNs = monoclock.Of(time.Now().Add(tc.deadline))
			}
			r, err := c.Infer(context.Background(), req)
			require.NoError(t, err)
			require.Equal(t, tc.want, r.Code, r.Error)
			require.Equal(t, pb.Code_OK, (<-first).Code)
		})
	}
}
