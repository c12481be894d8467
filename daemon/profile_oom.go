package daemon

import (
	"errors"
	"fmt"

	"github.com/gpulet/gpuletd/internal/bytefmt"
	"github.com/gpulet/gpuletd/internal/memcg"
	"github.com/gpulet/gpuletd/profiler"
)

// profileKilledForMemory is err, the failure of a profile job whose
// largest batch was top, said as what it most likely was when the kernel's
// out-of-memory killer counted a kill while it ran (between at and now)
// and its executor died: the profile loads the model and runs every batch
// up to top, and a model too large for the memory gpuletd may use is
// killed there, first of all, before it is ever placed. Without the
// words an operator read only "executor exited: signal: killed". Any other
// err is returned as it is.
func profileKilledForMemory(err error, at, now oomCounts, top int) error {
	if !errors.Is(err, profiler.ErrDeviceLost) {
		return err
	}
	var who string
	switch oomVerdict(at, now) {
	case "oom":
		who = fmt.Sprintf("the kernel's out-of-memory killer killed its executor (gpuletd's memory cgroup %s counted the kill)", now.group.Name)
	case "likely":
		who = "its executor was killed, most likely by the kernel's out-of-memory killer (the machine's count of such kills rose)"
	default:
		return err
	}
	fix := "the host is short of memory: free some, or lower the model's max_batch_size (its largest batches need the most)"
	if c := now.cg; at.group.Name != "" && c.ReachedLimit(at.cg) {
		fix = fmt.Sprintf("gpuletd's processes reached their memory limit of %s (cgroup %s; MemoryMax= in a systemd unit) while the model ran batches of up to %d: raise the limit, or lower the model's max_batch_size",
			bytefmt.Size(c.Limit), c.LimitOf, top)
	}
	return fmt.Errorf("%s: %s: %w", who, fix, err)
}

// ProfileOOMCheck reads the kernel's counts of out-of-memory kills now (of
// this process's memory cgroup, where `gpuletd profile`'s executors run,
// and of the machine) and returns what says a profile job's failure err as
// the kill it was when they rose by the time it is called
// (profileKilledForMemory; top is the job's largest batch). For gpuletd
// profile, which runs its executors itself.
func ProfileOOMCheck() func(err error, top int) error {
	var g *memcg.Group
	if s, err := memcg.Self(); err == nil {
		g = &s
	}
	at := lookOOM(g)
	return func(err error, top int) error { return profileKilledForMemory(err, at, lookOOM(g), top) }
}
