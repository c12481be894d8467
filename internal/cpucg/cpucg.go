// Package cpucg reads the CPU bandwidth limit of the cgroup a process runs
// in: what docker run --cpus, a Kubernetes container's CPU limit and
// systemd's CPUQuota= set (cgroup v2's cpu.max, or cpu.cfs_quota_us over
// cpu.cfs_period_us in the v1 cpu hierarchy). A process under such a limit
// may run on every core of its affinity mask, yet gets no more than the
// limit's worth of CPU time across them.
package cpucg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/internal/cgroupfs"
)

// Limit is the tightest CPU bandwidth limit over a cgroup and the groups
// above it.
type Limit struct {
	// CPUs is the limit in CPUs (quota over period: 1.5 is one and a half
	// cores' time); 0 means none.
	CPUs float64
	// Of names the group that sets it ("" with none).
	Of string
}

// Self is the limit over this process's cgroup; none (and no error) when
// it has no CPU cgroup to read.
func Self() (Limit, error) {
	return Of("/proc/self/cgroup", "/proc/self/mountinfo")
}

// Of is the limit over the CPU cgroup named in cgroupFile (a
// /proc/PID/cgroup) among the mounts listed in mountinfoFile (a
// /proc/PID/mountinfo); none without a CPU cgroup.
func Of(cgroupFile, mountinfoFile string) (Limit, error) {
	g, err := cgroupfs.Find(cgroupFile, mountinfoFile, "cpu", "cpu.max")
	if errors.Is(err, cgroupfs.ErrNone) {
		return Limit{}, nil
	}
	if err != nil {
		return Limit{}, fmt.Errorf("find CPU cgroup: %w", err)
	}
	var l Limit
	g.Up(func(name, dir string) bool {
		if cpus, ok := read(dir, g.V2); ok && (l.CPUs == 0 || cpus < l.CPUs) {
			l = Limit{CPUs: cpus, Of: name}
		}
		return true
	})
	return l, nil
}

// read is one group's limit in CPUs; false for none or an unreadable one.
func read(dir string, v2 bool) (float64, bool) {
	var quota, period string
	if v2 {
		b, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
		if err != nil {
			return 0, false
		}
		// "max 100000" (none) or "200000 100000": quota and period, µs.
		f := strings.Fields(string(b))
		if len(f) != 2 {
			return 0, false
		}
		quota, period = f[0], f[1]
	} else {
		q, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
		p, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
		if err1 != nil || err2 != nil {
			return 0, false
		}
		quota, period = strings.TrimSpace(string(q)), strings.TrimSpace(string(p)) // -1: none
	}
	q, err1 := strconv.ParseInt(quota, 10, 64)
	p, err2 := strconv.ParseInt(period, 10, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false
	}
	return float64(q) / float64(p), true
}
