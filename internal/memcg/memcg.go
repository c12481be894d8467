// Package memcg finds the memory cgroup a process runs in (cgroup v2, or
// the v1 memory hierarchy) and reads what the kernel counts there: the
// out-of-memory kills of its processes, how often it reached its limit,
// and the tightest limit that applies to it. Under systemd that cgroup is
// the service's, so a kill counted there is one of gpuletd's own
// processes, where /proc/vmstat counts the whole machine's.
package memcg

import (
	"errors"

	"github.com/gpulet/gpuletd/internal/cgroupfs"
)

// ErrNone is returned when a process has no memory cgroup this package
// can read: no cgroup file system mounted, or no memory controller.
var ErrNone = errors.New("no memory cgroup")

// Group is one memory cgroup, as mounted on this machine (its name, folder,
// cgroup version and hierarchy root: cgroupfs.Group).
type Group struct {
	cgroupfs.Group
}

// Self is the memory cgroup of this process (and of the processes it
// starts, which begin in it).
func Self() (Group, error) {
	return Of("/proc/self/cgroup", "/proc/self/mountinfo")
}

// Of finds the memory cgroup named in cgroupFile (a /proc/PID/cgroup) among
// the mounts listed in mountinfoFile (a /proc/PID/mountinfo)
// (cgroupfs.Find): the v1 memory hierarchy wins where both are mounted (a
// hybrid host keeps the memory controller there); a v2 group counts only
// when it has the memory controller's files.
func Of(cgroupFile, mountinfoFile string) (Group, error) {
	g, err := cgroupfs.Find(cgroupFile, mountinfoFile, "memory", "memory.events")
	if errors.Is(err, cgroupfs.ErrNone) {
		return Group{}, ErrNone
	}
	if err != nil {
		return Group{}, err
	}
	return Group{g}, nil
}
