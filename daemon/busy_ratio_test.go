package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/internal/monoclock"
)

// A gpu-let's busy share is its batches' time over its executor's uptime,
// the start read on the host's monotonic clock as the executor pushed it.
func TestBusyRatioIsOverTheExecutorsUptime(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name string
		st   *pb.ExecutorState
		want float64
		ok   bool
	}{
		{"no state yet", nil, 0, false},
		{"no start", &pb.ExecutorState{BusyUs: 1}, 0, false},
		{"a quarter of ten seconds", &pb.ExecutorState{StartedMonoNs: monoclock.Of(now.Add(-10 * time.Second)), BusyUs: 2_500_000}, 0.25, true},
		{"never above one", &pb.ExecutorState{StartedMonoNs: monoclock.Of(now.Add(-time.Second)), BusyUs: 3_000_000}, 1, true},
		{"a start not yet come", &pb.ExecutorState{StartedMonoNs: monoclock.Of(now.Add(time.Second))}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &gpuletRun{}
			if tc.st != nil {
				g.pushed.Store(tc.st)
			}
			got, up, ok := g.busyRatio(now)
			require.Equal(t, tc.ok, ok)
			require.InDelta(t, tc.want, got, 1e-6)
			if ok {
				require.Equal(t, now.Sub(monoclock.Time(tc.st.StartedMonoNs)), up)
			}
		})
	}
}
