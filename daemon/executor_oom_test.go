package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/stretchr/testify/require"
)

// memoryCgroupForTest makes a memory cgroup of limit bytes (and no swap)
// below this process's own, found as the daemon finds its own (memcg.Of
// on this machine's mounts); it skips the test where none can be made:
// not root, no memory cgroup, or one that delegates no memory controller.
func memoryCgroupForTest(t *testing.T, limit int64) memcg.Group {
	t.Helper()
	self, err := memcg.Self()
	if err != nil {
		t.Skipf("no memory cgroup: %v", err)
	}
	name := fmt.Sprintf("gpuletd-test-%d", os.Getpid())
	dir := filepath.Join(self.Dir, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a memory cgroup: %v", err)
	}
	t.Cleanup(func() {
		// It is removed once the kernel has taken its dead processes out.
		require.Eventually(t, func() bool { return os.Remove(dir) == nil }, 30*time.Second, 50*time.Millisecond)
	})
	limits := [][2]string{{"memory.limit_in_bytes", ""}, {"memory.memsw.limit_in_bytes", ""}}
	if self.V2 {
		limits = [][2]string{{"memory.max", ""}, {"memory.swap.max", "0"}}
	}
	for i, l := range limits {
		v := l[1]
		if v == "" {
			v = fmt.Sprint(limit)
		}
		err := os.WriteFile(filepath.Join(dir, l[0]), []byte(v), 0o644)
		if err != nil && i == 0 {
			t.Skipf("cannot limit a memory cgroup: %v", err)
		}
	}
	cgroupFile := filepath.Join(t.TempDir(), "cgroup")
	line := "4:memory:" + strings.TrimSuffix(self.Name, "/") + "/" + name + "\n"
	if self.V2 {
		line = "0::" + strings.TrimSuffix(self.Name, "/") + "/" + name + "\n"
	}
	require.NoError(t, os.WriteFile(cgroupFile, []byte(line), 0o644))
	g, err := memcg.Of(cgroupFile, "/proc/self/mountinfo")
	require.NoError(t, err)
	require.Equal(t, dir, g.Dir)
	return g
}

// An executor that the kernel kills at gpuletd's memory limit fails its
// start saying that it was the out-of-memory killer, certainly (gpuletd's
// cgroup counted the kill), and that the limit was reached: a real kill,
// the fake executor joining a memory cgroup of 32 MiB (as an executor
// starts in the daemon's) and filling it.
func TestAnExecutorKilledAtTheMemoryLimitIsSaidSo(t *testing.T) {
	cg := memoryCgroupForTest(t, 32<<20)
	s, _ := fakeSupervisor(t, fmt.Sprintf("echo $$ > %s/cgroup.procs\nx=$(head -c 400000000 /dev/zero | tr '\\0' a)\necho ${#x}\n", cg.Dir))
	s.memGroup = &cg
	g := cpuRun(t, s)
	defer g.lease.Release()
	err := g.launch(context.Background())
	require.ErrorContains(t, err, "executor exited before it was ready: signal: killed")
	require.ErrorContains(t, err, "the executor was killed by the kernel's out-of-memory killer (gpuletd's processes reached their memory limit of 32 MiB")
	require.ErrorContains(t, err, "of cgroup "+cg.Name)
	require.Equal(t, oomRestartBackoff0, nextRestartBackoff(restartBackoff0, err), "the next try waits minutes")
}
