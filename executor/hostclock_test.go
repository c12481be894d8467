package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
)

// hostClock reads CLOCK_MONOTONIC as another process of the host does,
// without this process's anchor (internal/monoclock).
func hostClock(t *testing.T) time.Duration {
	t.Helper()
	var ts unix.Timespec
	require.NoError(t, unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts))
	return time.Duration(ts.Nano())
}

// An executor reads a request's deadline, and publishes its state's
// instants, on the host's monotonic clock, as read by any process: a
// deadline a second ahead on it is served, one a second behind refused, and
// the state's instants sit around the moment it was asked for. On the wall
// clock, which a step of the system's date moves under processes that
// started before it, each of these would be off by the step.
func TestTimesCrossOnTheHostsMonotonicClock(t *testing.T) {
	before := hostClock(t)
	c, states := watchedDouble(t)
	first := awaitState(t, states, "at all", func(*pb.ExecutorState) bool { return true })
	after := hostClock(t)
	require.GreaterOrEqual(t, time.Duration(first.AtMonoNs), before)
	require.LessOrEqual(t, time.Duration(first.AtMonoNs), after)

	ahead, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)},
		DeadlineMonoNs: int64(hostClock(t) + time.Second)})
	require.NoError(t, err)
	require.Equal(t, pb.Code_OK, ahead.Code, ahead.Error)
	behind, err := c.Infer(context.Background(), &pb.InferRequest{Model: "double", Inputs: []*pb.Tensor{xInput(1, 0)},
		DeadlineMonoNs: int64(hostClock(t) - time.Second)})
	require.NoError(t, err)
	require.Equal(t, pb.Code_DEADLINE, behind.Code, behind.Error)
}
