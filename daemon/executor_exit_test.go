package daemon

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// exitOf runs script in sh and returns how it ended.
func exitOf(t *testing.T, script string) error {
	t.Helper()
	err := exec.Command("sh", "-c", script).Run()
	require.Error(t, err)
	return err
}

func TestExitWords(t *testing.T) {
	killed, crashed, exited := exitOf(t, "kill -KILL $$"), exitOf(t, "kill -SEGV $$"), exitOf(t, "exit 2")
	for _, tc := range []struct {
		name          string
		exit          error
		unanswered    bool
		oomAt, oomNow int64
		msg           string
		cause         string
	}{
		{"killed while the kernel killed for memory", killed, false, 3, 4,
			"executor was killed, most likely by the kernel's out-of-memory killer (its count of kills rose while the executor ran); restarting it", "oom"},
		{"killed, the kernel's count still", killed, false, 3, 3, "executor was killed (SIGKILL) from outside gpuletd; restarting it", ""},
		{"killed, no count on this kernel", killed, false, -1, -1, "executor was killed (SIGKILL) from outside gpuletd; restarting it", ""},
		{"killed by gpuletd for its health checks", killed, true, 3, 4, "executor did not answer its health checks and was killed; restarting it", ""},
		{"a crash", crashed, false, 3, 4, "executor crashed (signal: segmentation fault); restarting it", ""},
		{"an exit", exited, false, 3, 4, "executor exited; restarting it", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, attrs := exitWords(tc.exit, tc.unanswered, tc.oomAt, tc.oomNow)
			require.Equal(t, tc.msg, msg)
			require.Equal(t, tc.exit.Error(), attrs["exit"])
			require.Equal(t, tc.cause, attrs["cause"])
		})
	}
}

// The kernel's count is read from /proc/vmstat where the kernel keeps it.
func TestReadOOMKills(t *testing.T) {
	b, err := os.ReadFile(vmstatPath)
	if err != nil || !strings.Contains(string(b), "\noom_kill ") {
		t.Skip("this kernel does not count out-of-memory kills in /proc/vmstat")
	}
	n, ok := readOOMKills()
	require.True(t, ok)
	require.GreaterOrEqual(t, n, int64(0))
}

// An executor killed with SIGKILL while the kernel's out-of-memory kills
// rose is said to be the OOM killer's, with what to do, in its restart
// event.
func TestAnExecutorKilledForMemoryIsSaidSo(t *testing.T) {
	ctx := context.Background()
	s, st := fakeSupervisor(t, "echo $$ > \"$0.pid\"\nexec sleep 600\n")
	var kills atomic.Int64
	kills.Store(3)
	s.oomKills = func() (int64, bool) { return kills.Load(), true }
	g := monitoredRun(t, s)
	g.mu.Lock()
	g.oomAt = 3 // as launch records it
	g.mu.Unlock()
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(s.binary + ".pid")
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	}, 30*time.Second, 10*time.Millisecond)
	kills.Store(4)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return len(eventKinds(t, st)) > 0 }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, s.retire(ctx, g))
	evs, err := st.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Equal(t, EventExecutorRestart, evs[0].Kind)
	require.Contains(t, evs[0].Message, "most likely by the kernel's out-of-memory killer")
	require.Equal(t, "oom", evs[0].Attrs["cause"])
	require.Equal(t, "3→4", evs[0].Attrs["oom_kills"])
	require.Equal(t, "signal: killed", evs[0].Attrs["exit"])
}

// An executor that the kernel killed while it started (loading its models,
// when its memory grows most) fails its start saying so; one that died
// otherwise keeps its own error.
func TestAStartKilledForMemoryIsSaidSo(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rises bool
	}{{"the kernel's count rose", true}, {"it did not", false}} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := fakeSupervisor(t, "kill -KILL $$\n")
			var reads atomic.Int64
			s.oomKills = func() (int64, bool) {
				n := reads.Add(1) // 1 when spawned, 2 after
				if !tc.rises {
					n = 1
				}
				return n, true
			}
			g := cpuRun(t, s)
			defer g.lease.Release()
			err := g.launch(context.Background())
			require.ErrorContains(t, err, "executor exited before it was ready: signal: killed")
			if tc.rises {
				require.ErrorContains(t, err, "most likely by the kernel's out-of-memory killer (the host is short of memory")
			} else {
				require.NotContains(t, err.Error(), "out-of-memory")
			}
		})
	}
}
