package executor

import (
	"testing"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/executor/sched"
)

// Each reason the scheduler refuses a request for reaches the daemon as its
// own code, so that its failure reason says what happened: a request
// dropped from a queue's head is not one refused on arrival.
func TestRejectCodes(t *testing.T) {
	for why, want := range map[sched.Reason]pb.Code{
		sched.DeadlineUnreachable: pb.Code_DEADLINE,
		sched.Preempted:           pb.Code_DEADLINE,
		sched.Dropped:             pb.Code_DROPPED,
		sched.QueueFull:           pb.Code_QUEUE_FULL,
		sched.ModelRemoved:        pb.Code_UNAVAILABLE,
	} {
		require.Equal(t, want, rejectCode(why), "%s", why)
	}
}
