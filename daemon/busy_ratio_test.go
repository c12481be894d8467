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

// The status and the metric say how busy a gpu-let is of late, from the
// states its executor pushed: one that ran batches 90% of its first minute
// and nothing in the 30 s since reads 0, where its share since the start
// is 60%.
func TestRecentBusyIsOfTheStatesPushed(t *testing.T) {
	now := time.Now()
	start := now.Add(-90 * time.Second)
	g := &gpuletRun{}
	_, ok := g.recentBusy(now)
	require.False(t, ok)
	push := func(at time.Time, busy time.Duration) {
		g.tookState(&pb.ExecutorState{StartedMonoNs: monoclock.Of(start), AtMonoNs: monoclock.Of(at), BusyUs: busy.Microseconds()})
	}
	for s := 1; s <= 60; s++ {
		push(start.Add(time.Duration(s)*time.Second), time.Duration(s)*900*time.Millisecond)
	}
	got, ok := g.recentBusy(start.Add(60 * time.Second))
	require.True(t, ok)
	require.InDelta(t, 0.9, got, 0.01)
	got, ok = g.recentBusy(now)
	require.True(t, ok)
	require.Zero(t, got)
	lifetime, _, _ := g.busyRatio(now)
	require.InDelta(t, 0.6, lifetime, 0.01)
}
