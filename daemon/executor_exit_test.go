package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/executor"
	"github.com/gpulet/gpuletd/internal/cgroupfs"
	"github.com/gpulet/gpuletd/internal/crashlog"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
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
	faulted := exitOf(t, "exit "+strconv.Itoa(executor.ExitDeviceFault))
	hung := exitOf(t, "exit "+strconv.Itoa(executor.ExitRunHung))
	const loops = "the device can run nothing more in this process: a run did not end: a batch of 1 of add-one has run for 30s, planned for 400µs: its run does not end (a custom operator that loops or waits for good, a deadlock)"
	const illegal = "the device can run nothing more in this process: cudaErrorIllegalAddress (CUDA error 700): an illegal memory access was encountered"
	host := func(n int64) oomCounts { return oomCounts{host: n} }
	group := func(hostKills, kills, hits int64, limit int64) oomCounts {
		return oomCounts{host: hostKills, group: memcg.Group{Group: cgroupfs.Group{Name: "/system.slice/gpuletd.service", V2: true}},
			cg: memcg.Counts{Kills: kills, LimitHits: hits, Limit: limit, LimitOf: "/system.slice/gpuletd.service", Peak: -1}}
	}
	for _, tc := range []struct {
		name       string
		exit       error
		unanswered bool
		said       string
		at, now    oomCounts
		msg        string
		cause      string
		fix        string
	}{
		{"killed while the kernel killed for memory", killed, false, "", host(3), host(4),
			"executor was killed, most likely by the kernel's out-of-memory killer (its count of kills rose while the executor ran); restarting it", "oom", "the host is short of memory"},
		{"killed, the kernel's count still", killed, false, "", host(3), host(3), "executor was killed (SIGKILL) from outside gpuletd; restarting it", "", ""},
		{"killed, no count on this kernel", killed, false, "", host(-1), host(-1), "executor was killed (SIGKILL) from outside gpuletd; restarting it", "", ""},
		{"killed, gpuletd's cgroup counted it", killed, false, "", group(3, 0, 0, 0), group(4, 1, 0, 0),
			"executor was killed by the kernel's out-of-memory killer (gpuletd's memory cgroup /system.slice/gpuletd.service counted the kill); restarting it", "oom", "the host is short of memory"},
		{"killed at gpuletd's memory limit", killed, false, "", group(3, 0, 5, 4<<30), group(4, 1, 6, 4<<30),
			"executor was killed by the kernel's out-of-memory killer (gpuletd's memory cgroup /system.slice/gpuletd.service counted the kill); restarting it", "oom",
			"gpuletd's processes reached their memory limit of 4 GiB (memory.max of cgroup /system.slice/gpuletd.service; MemoryMax= in a systemd unit)"},
		{"killed while another process was killed for memory", killed, false, "", group(3, 0, 0, 0), group(4, 0, 0, 0),
			"executor was killed (SIGKILL) from outside gpuletd; restarting it", "", ""},
		{"killed by gpuletd for its health checks", killed, true, "", host(3), host(4), "executor did not answer its health checks and was killed; restarting it", "", ""},
		{"a crash", crashed, false, "", group(3, 0, 0, 0), group(4, 1, 1, 0), "executor crashed (signal: segmentation fault); restarting it", "", ""},
		{"an exit", exited, false, "", host(3), host(4), "executor exited; restarting it", "", ""},
		{"a GPU that failed for good", faulted, false, illegal, host(3), host(3),
			"executor stopped after its GPU failed for good in its process (" + illegal + "); restarting it, with a new CUDA context", "device_fault", ""},
		{"a GPU that failed for good, nothing logged", faulted, false, "", host(3), host(3),
			"executor stopped after its GPU failed for good in its process (its log says which error); restarting it, with a new CUDA context", "device_fault", ""},
		{"a run that did not end", hung, false, loops, host(3), host(3),
			"executor stopped: a run did not end (" + loops + "); restarting it", "hang", ""},
		{"a run that did not end, nothing logged", hung, false, "", host(3), host(3),
			"executor stopped: a run did not end (its log says which batch); restarting it", "hang", ""},
		{"a crash after an error", crashed, false, "run failed", host(3), host(3), "executor crashed (signal: segmentation fault); restarting it", "", ""},
		{"a Go crash report", exited, false, "SIGSEGV: segmentation violation" + crashlog.InC, host(3), host(3),
			"executor crashed: SIGSEGV: segmentation violation (in C code: ONNX Runtime or a library it loaded); restarting it", "crash", ""},
		{"a panic", exited, false, "panic: runtime error: index out of range [3] with length 3", host(3), host(3),
			"executor crashed: panic: runtime error: index out of range [3] with length 3; restarting it", "crash", ""},
		{"an exit after an error", exited, false, "load failed", host(3), host(3), "executor exited; restarting it", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, attrs := exitWords(tc.exit, tc.unanswered, tc.said, tc.at, tc.now)
			require.Equal(t, tc.msg, msg)
			require.Equal(t, tc.said, attrs["last_error"])
			require.Equal(t, tc.exit.Error(), attrs["exit"])
			require.Equal(t, tc.cause, attrs["cause"])
			if tc.fix == "" {
				require.Empty(t, attrs["fix"])
			} else {
				require.Contains(t, attrs["fix"], tc.fix)
			}
		})
	}
}

// An executor that exits after its GPU failed for good is said to have,
// with the error it logged last, in its restart event.
func TestAnExecutorWhoseGPUFailedIsSaidSo(t *testing.T) {
	const fault = "the device can run nothing more in this process: cudaErrorIllegalAddress (CUDA error 700): an illegal memory access was encountered"
	s, st := fakeSupervisor(t, "echo '{\"level\":\"error\",\"msg\":\"device fault\",\"error\":\""+fault+"\"}' >&2\n"+
		"echo 'serve executor: "+fault+"' >&2\n"+
		"exit "+strconv.Itoa(executor.ExitDeviceFault)+"\n")
	g := cpuRun(t, s)
	sock, err := s.socketPath()
	require.NoError(t, err)
	out := newChildLog(zap.NewNop())
	p, err := executor.Spawn(executor.SpawnOptions{Binary: s.binary, Socket: sock, Output: out})
	require.NoError(t, err)
	g.proc, g.out = p, out
	s.mu.Lock()
	s.running[g.id] = g
	s.mu.Unlock()
	go g.monitor()
	ev := firstEvent(t, s, st, g)
	require.Equal(t, EventExecutorRestart, ev.Kind)
	require.Equal(t, "executor stopped after its GPU failed for good in its process ("+fault+"); restarting it, with a new CUDA context", ev.Message)
	require.Equal(t, "device_fault", ev.Attrs["cause"])
	require.Equal(t, fault, ev.Attrs["last_error"])
	require.Equal(t, "exit status 75", ev.Attrs["exit"])
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
	s, st := fakeSupervisor(t, "echo $$ > \"$0.pid\"\nexec sleep 600\n")
	var kills atomic.Int64
	kills.Store(3)
	s.oomLook = func() oomCounts { return oomCounts{host: kills.Load()} }
	g := monitoredRun(t, s)
	g.mu.Lock()
	g.oomAt = oomCounts{host: 3} // as launch records it
	g.mu.Unlock()
	pid := fakePID(t, s)
	kills.Store(4)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	ev := firstEvent(t, s, st, g)
	require.Equal(t, EventExecutorRestart, ev.Kind)
	require.Contains(t, ev.Message, "most likely by the kernel's out-of-memory killer")
	require.Equal(t, "oom", ev.Attrs["cause"])
	require.Equal(t, "3→4", ev.Attrs["oom_kills"])
	require.Equal(t, "signal: killed", ev.Attrs["exit"])
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
			s.oomLook = func() oomCounts {
				n := reads.Add(1) // 1 when spawned, 2 after
				if !tc.rises {
					n = 1
				}
				return oomCounts{host: n}
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

func TestNextRestartBackoff(t *testing.T) {
	failed := errors.New("executor exited before it was ready: exit status 1")
	oom := &killedForMemory{err: errors.New("executor exited before it was ready: signal: killed"), fix: "the host is short of memory"}
	for _, tc := range []struct {
		name string
		cur  time.Duration
		err  error
		want time.Duration
	}{
		{"a failed start doubles the wait", 100 * time.Millisecond, failed, 200 * time.Millisecond},
		{"up to its ceiling", 8 * time.Second, failed, restartBackoffN},
		{"a start killed for memory waits minutes", 200 * time.Millisecond, oom, time.Minute},
		{"again: doubled", time.Minute, oom, 2 * time.Minute},
		{"up to its own ceiling", 8 * time.Minute, oom, oomRestartBackoffN},
		{"wrapped, it is still one", 200 * time.Millisecond, fmt.Errorf("restart: %w", oom), time.Minute},
		{"a failure of another kind after it: back to seconds", 4 * time.Minute, failed, restartBackoffN},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, nextRestartBackoff(tc.cur, tc.err))
		})
	}
	require.Equal(t, "executor exited before it was ready: signal: killed: the executor was killed by the kernel's out-of-memory killer (the host is short of memory)", oom.Error())
	require.ErrorContains(t, (&killedForMemory{err: failed, likely: true, fix: "x"}), "the executor was killed, most likely by the kernel's out-of-memory killer (x)")
}

// An executor's restart event says how much memory it held at its last
// health check: which executor was large, when the kernel chose among
// them.
func TestARestartSaysWhatTheExecutorHeld(t *testing.T) {
	s, st := fakeSupervisor(t, "exec sleep 600\n") // never answers: killed after three missed checks
	s.healthEvery = 30 * time.Millisecond
	ev := firstEvent(t, s, st, monitoredRun(t, s))
	require.Equal(t, EventExecutorRestart, ev.Kind)
	require.Contains(t, ev.Message, "did not answer its health checks")
	require.Regexp(t, `^\d+(\.\d)? (KiB|MiB)$`, ev.Attrs["resident_before"])
}
