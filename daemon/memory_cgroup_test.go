package daemon

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/internal/cgroupfs"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// memoryCollector is the node's memory cgroup metrics alone.
type memoryCollector struct{ n *node }

func (c memoryCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descCgroupWorkingSet
	ch <- descCgroupLimit
	ch <- descCgroupOOMKills
	ch <- descCPUModelsMemory
}
func (c memoryCollector) Collect(ch chan<- prometheus.Metric) { c.n.collectMemory(ch) }

// cgroupV2 writes a cgroup v2 service group under a slice of limit bytes
// ("max": none), and returns it.
func cgroupV2(t *testing.T, limit string, current, inactive, kills int) *memcg.Group {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "system.slice", "gpuletd.service")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, content := range map[string]string{
		"system.slice/memory.max":                     limit,
		"system.slice/gpuletd.service/memory.max":     "max",
		"system.slice/gpuletd.service/memory.events":  "oom 0\noom_kill " + strconv.Itoa(kills) + "\n",
		"system.slice/gpuletd.service/memory.current": strconv.Itoa(current),
		"system.slice/gpuletd.service/memory.stat":    "anon 1\ninactive_file " + strconv.Itoa(inactive) + "\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
	}
	return &memcg.Group{Group: cgroupfs.Group{Name: "/system.slice/gpuletd.service", Dir: dir, V2: true}}
}

func TestMemoryCgroupStatusAndMetrics(t *testing.T) {
	n := &node{memGroup: cgroupV2(t, "4294967296", 3<<30, 1<<30, 2)}
	require.Equal(t, &memoryStatus{Cgroup: "/system.slice/gpuletd.service", UsageBytes: 3 << 30, WorkingSetBytes: 2 << 30,
		LimitBytes: 4 << 30, LimitOf: "/system.slice", OOMKills: 2}, n.memoryNow())
	require.NoError(t, testutil.CollectAndCompare(memoryCollector{n}, strings.NewReader(`
# HELP gpuletd_memory_cgroup_limit_bytes The tightest memory limit over the daemon's cgroup and those above it (MemoryMax=); absent without one.
# TYPE gpuletd_memory_cgroup_limit_bytes gauge
gpuletd_memory_cgroup_limit_bytes 4.294967296e+09
# HELP gpuletd_memory_cgroup_oom_kills_total Processes of the daemon's cgroup the kernel killed for memory since the group was made (under systemd, since the service started).
# TYPE gpuletd_memory_cgroup_oom_kills_total counter
gpuletd_memory_cgroup_oom_kills_total 2
# HELP gpuletd_memory_cgroup_working_set_bytes Memory the daemon's cgroup (its executors with it) holds, less the file cache the kernel may drop at once: what its memory limit is met by.
# TYPE gpuletd_memory_cgroup_working_set_bytes gauge
gpuletd_memory_cgroup_working_set_bytes 2.147483648e+09
`)))

	near := &node{memGroup: cgroupV2(t, "4294967296", 3900<<20, 0, 0)}
	require.True(t, near.memoryNow().NearLimit, "over 90% of its limit")

	unlimited := &node{memGroup: cgroupV2(t, "max", 1000, 0, 0)}
	require.Equal(t, 2, testutil.CollectAndCount(memoryCollector{unlimited}), "no limit series without a limit")
	require.Zero(t, unlimited.memoryNow().LimitBytes)

	none := &node{}
	require.Nil(t, none.memoryNow())
	require.Zero(t, testutil.CollectAndCount(memoryCollector{none}))
	gone := &node{memGroup: &memcg.Group{Group: cgroupfs.Group{Name: "/gone", Dir: filepath.Join(t.TempDir(), "gone"), V2: true}}}
	require.Nil(t, gone.memoryNow(), "a group that went away reads as none")
}
