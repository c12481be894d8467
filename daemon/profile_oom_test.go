package daemon

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/internal/cgroupfs"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/gpulet/gpuletd/profiler"
)

func TestProfileKilledForMemory(t *testing.T) {
	lost := fmt.Errorf("profile vgg on cpu at 50%%: load the model: %w: executor exited: signal: killed", profiler.ErrDeviceLost)
	host := func(n int64) oomCounts { return oomCounts{host: n} }
	group := func(kills, hits, limit int64) oomCounts {
		return oomCounts{host: 7, group: memcg.Group{Group: cgroupfs.Group{Name: "/system.slice/gpuletd.service", V2: true}},
			cg: memcg.Counts{Kills: kills, LimitHits: hits, Limit: limit, LimitOf: "/system.slice/gpuletd.service", Peak: -1}}
	}
	for _, tc := range []struct {
		name    string
		err     error
		at, now oomCounts
		want    string
	}{
		{"at gpuletd's memory limit", lost, group(0, 2, 1<<30), group(1, 3, 1<<30),
			"the kernel's out-of-memory killer killed its executor (gpuletd's memory cgroup /system.slice/gpuletd.service counted the kill): " +
				"gpuletd's processes reached their memory limit of 1 GiB (cgroup /system.slice/gpuletd.service; MemoryMax= in a systemd unit) " +
				"while the model ran batches of up to 32: raise the limit, or lower the model's max_batch_size: " + lost.Error()},
		{"the host short of memory", lost, group(0, 0, 0), group(1, 0, 0),
			"the kernel's out-of-memory killer killed its executor (gpuletd's memory cgroup /system.slice/gpuletd.service counted the kill): " +
				"the host is short of memory: free some, or lower the model's max_batch_size (its largest batches need the most): " + lost.Error()},
		{"only the machine's count rose", lost, host(3), host(4),
			"its executor was killed, most likely by the kernel's out-of-memory killer (the machine's count of such kills rose): " +
				"the host is short of memory: free some, or lower the model's max_batch_size (its largest batches need the most): " + lost.Error()},
		{"no kill counted", lost, group(0, 0, 0), group(0, 0, 0), lost.Error()},
		{"another failure", errors.New("model file is broken"), group(0, 0, 0), group(1, 0, 0), "model file is broken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := profileKilledForMemory(tc.err, tc.at, tc.now, 32)
			require.EqualError(t, got, tc.want)
			require.ErrorIs(t, got, tc.err)
		})
	}
}

// A failure other than a lost executor stays as it was, whatever the
// kernel counted meanwhile (a lost one is TestProfileKilledForMemory's,
// and the real kill gpuletd profile's run in BENCHMARKS: the counts here
// are the machine's and this process's cgroup's, which other tests share).
func TestProfileOOMCheckLeavesOtherFailures(t *testing.T) {
	check := ProfileOOMCheck()
	other := errors.New("model file is broken")
	require.Equal(t, other, check(other, 8))
	require.NoError(t, check(nil, 8))
}
