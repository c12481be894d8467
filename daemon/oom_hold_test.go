package daemon

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/internal/cgroupfs"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/stretchr/testify/require"
)

func TestOOMHolds(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	killed := &killedForMemory{err: errors.New("executor exited before it was ready: signal: killed"), fix: "the host is short of memory"}
	// limitIs reads a memory limit over gpuletd of l bytes (0: none).
	limitIs := func(l int64) func() oomCounts {
		return func() oomCounts {
			return oomCounts{host: -1, group: memcg.Group{Group: cgroupfs.Group{Name: "/gpuletd.service"}}, cg: memcg.Counts{Limit: l}}
		}
	}
	var h oomHolds
	require.NoError(t, h.check("cpu/50/vgg", t0, limitIs(0)), "nothing held at first")

	require.Equal(t, time.Minute, h.done("cpu/50/vgg", t0, killed))
	err := h.check("cpu/50/vgg", t0.Add(59*time.Second), limitIs(0))
	require.ErrorContains(t, err, "not started again before "+t0.Add(time.Minute).Local().Format(time.TimeOnly)+", as its last start was killed for memory: ")
	require.ErrorContains(t, err, "the executor was killed by the kernel's out-of-memory killer (the host is short of memory)")
	require.NoError(t, h.check("cpu/50/lenet5,vgg", t0.Add(time.Second), limitIs(0)), "another gpu-let is not held")
	require.NoError(t, h.check("cpu/50/vgg", t0.Add(time.Minute), limitIs(0)), "tried again once the wait is over")

	require.Equal(t, 2*time.Minute, h.done("cpu/50/vgg", t0.Add(time.Minute), killed), "killed again: it waits longer")
	require.Zero(t, h.done("cpu/50/vgg", t0.Add(3*time.Minute), errors.New("exit status 1")), "an end of another kind lets it go")
	require.NoError(t, h.check("cpu/50/vgg", t0.Add(3*time.Minute), limitIs(0)))
	require.Equal(t, time.Minute, h.done("cpu/50/vgg", t0.Add(4*time.Minute), killed), "and starts over")
	require.Zero(t, h.done("cpu/50/vgg", t0.Add(5*time.Minute), nil))

	// Killed under a limit of 1 GiB: held while the limit stays or falls,
	// let go once it is raised or gone.
	require.Equal(t, time.Minute, h.done("cpu/50/vgg", t0, &killedForMemory{err: killed.err, fix: killed.fix, limit: 1 << 30}))
	require.Error(t, h.check("cpu/50/vgg", t0.Add(time.Second), limitIs(1<<30)))
	require.Error(t, h.check("cpu/50/vgg", t0.Add(time.Second), limitIs(1<<29)))
	require.NoError(t, h.check("cpu/50/vgg", t0.Add(time.Second), limitIs(2<<30)), "the limit was raised")
	require.NoError(t, h.check("cpu/50/vgg", t0.Add(time.Second), limitIs(0)), "the limit was taken off")

	h.clear()
	require.NoError(t, h.check("cpu/50/vgg", t0.Add(time.Second), limitIs(1<<30)), "an operator asked for a new plan")
}

// A gpu-let whose start the kernel killed for memory is not started
// again at the next try (each re-plan tries): no executor is spawned, its
// models say why, and an error event says when it is tried again.
func TestAGpuletKilledForMemoryAtStartIsHeld(t *testing.T) {
	s, st := fakeSupervisor(t, "echo x >> \"$0.starts\"\nkill -KILL $$\n")
	var reads atomic.Int64
	s.oomLook = func() oomCounts { return oomCounts{host: reads.Add(1)} } // rises between every two reads
	dev, err := s.devices.Inventory().Device("cpu")
	require.NoError(t, err)
	models := []*pb.LoadModelRequest{{Name: "vgg"}}
	ctx := context.Background()

	_, err = s.start(ctx, gpuletSpec{device: dev, size: 100}, models)
	require.ErrorContains(t, err, "most likely by the kernel's out-of-memory killer")
	_, err = s.start(ctx, gpuletSpec{device: dev, size: 100}, models)
	require.ErrorContains(t, err, "start gpu-let on cpu: not started again before ")
	require.ErrorContains(t, err, "most likely by the kernel's out-of-memory killer", "with why")
	b, rerr := os.ReadFile(s.binary + ".starts")
	require.NoError(t, rerr)
	require.Equal(t, 1, strings.Count(string(b), "x"), "one executor was spawned, not two")

	evs, err := st.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, EventExecutorStart, evs[0].Kind)
	require.Equal(t, "error", string(evs[0].Severity))
	require.Contains(t, evs[0].Message, "did not start: the kernel killed its executor for memory while it loaded its models; not tried again for 1m0s")
	require.Equal(t, "oom", evs[0].Attrs["cause"])
	require.Equal(t, "vgg", evs[0].Attrs["models"])
}

// An executor whose restart the kernel killed for memory waits a minute
// before the next try, unless an operator asks for a new plan or the
// memory limit over gpuletd is raised: then it is tried at once.
func TestARestartWaitingAfterAnOOMKillIsWoken(t *testing.T) {
	for _, tc := range []struct {
		name string
		wake func(s *supervisor, limit *atomic.Int64)
	}{
		{"by an operator's reorganize", func(s *supervisor, _ *atomic.Int64) { s.retry.fire() }},
		{"by a higher limit", func(_ *supervisor, limit *atomic.Int64) { limit.Store(2 << 30) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The first executor serves until killed; every start after it is
			// killed while it starts, until the third, which serves.
			s, _ := fakeSupervisor(t, `n=$(cat "$0.n" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$0.n"
if [ $n = 2 ]; then kill -KILL $$; fi
echo $$ > "$0.pid"; exec sleep 600
`)
			var kills, limit atomic.Int64
			limit.Store(1 << 30)
			s.oomLook = func() oomCounts {
				return oomCounts{host: -1, group: memcg.Group{Group: cgroupfs.Group{Name: "/gpuletd.service"}}, cg: memcg.Counts{Kills: kills.Add(1), Limit: limit.Load(), LimitOf: "/gpuletd.service", LimitHits: -1, Peak: -1}}
			}
			g := monitoredRun(t, s)
			defer func() { require.NoError(t, s.retire(context.Background(), g)) }()
			starts := func() string {
				b, _ := os.ReadFile(s.binary + ".n")
				return strings.TrimSpace(string(b))
			}
			require.NoError(t, syscall.Kill(fakePID(t, s), syscall.SIGKILL))
			require.Eventually(t, func() bool { return starts() == "2" }, 30*time.Second, 10*time.Millisecond, "restarted, and killed while it started")
			require.Eventually(t, func() bool { return g.nextTry.Load() > 0 }, 30*time.Second, 10*time.Millisecond, "waiting for the next try")
			time.Sleep(300 * time.Millisecond)
			require.Equal(t, "2", starts(), "the next try waits")
			next := time.Unix(0, g.nextTry.Load())
			require.WithinDuration(t, time.Now().Add(time.Minute), next, 2*time.Second, "the status can say when")
			tc.wake(s, &limit)
			require.Eventually(t, func() bool { return starts() == "3" }, 20*time.Second, 10*time.Millisecond, "tried at once")
		})
	}
}
