package cpushare

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// Online lists the cores this process may run on (its affinity mask, which
// systemd's CPUAffinity= and cgroup cpusets narrow), ascending.
func Online() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("get CPU affinity: %w", err)
	}
	var out []int
	for c := range maxCPU {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Apply pins every thread of the current process to cores. Threads started
// later inherit the mask from the thread that creates them; a thread that
// appears while Apply runs is caught by a further pass.
func Apply(cores []int) error {
	if len(cores) == 0 {
		return fmt.Errorf("apply CPU affinity: %w: empty", ErrBadCoreList)
	}
	var set unix.CPUSet
	for _, c := range cores {
		if c < 0 || c >= maxCPU {
			return fmt.Errorf("apply CPU affinity %v: %w: core %d", cores, ErrBadCoreList, c)
		}
		set.Set(c)
	}
	// The calling thread first, so that threads it creates inherit the mask.
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("apply CPU affinity %s: %w", FormatList(cores), err)
	}
	done := map[int]bool{}
	for pass := 0; pass < 10; pass++ {
		tids, err := threads()
		if err != nil {
			return fmt.Errorf("apply CPU affinity %s: %w", FormatList(cores), err)
		}
		fresh := 0
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			fresh++
			if err := unix.SchedSetaffinity(tid, &set); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("apply CPU affinity %s to thread %d: %w", FormatList(cores), tid, err)
			}
			done[tid] = true
		}
		if fresh == 0 {
			return nil
		}
	}
	return fmt.Errorf("apply CPU affinity %s: threads kept appearing", FormatList(cores))
}

// threads lists the thread ids of the current process.
func threads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	slices.Sort(out)
	return out, nil
}
