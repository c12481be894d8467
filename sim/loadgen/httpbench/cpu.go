package httpbench

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gpulet/gpuletd/internal/procfs"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 on
// Linux whatever the kernel's own tick rate.
const userHZ = 100

// ProcessCPU is a process's user + system CPU time from /proc/<pid>/stat.
func ProcessCPU(pid int) (time.Duration, error) {
	f, err := procfs.Stat(pid)
	if err != nil {
		return 0, fmt.Errorf("read cpu time: %w", err)
	}
	return cpuTime(f)
}

// parseStat reads utime and stime from a /proc/<pid>/stat line.
func parseStat(b []byte) (time.Duration, error) {
	f, err := procfs.StatFields(b)
	if err != nil {
		return 0, fmt.Errorf("read cpu time: %w", err)
	}
	return cpuTime(f)
}

// cpuTime is utime (field 14) plus stime (15) of a stat line's fields from
// the state (field 3) on.
func cpuTime(f []string) (time.Duration, error) {
	if len(f) < 13 {
		return 0, errors.New("read cpu time: short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[14-3], 10, 64)
	stime, err2 := strconv.ParseInt(f[15-3], 10, 64)
	if err1 != nil || err2 != nil || utime < 0 || stime < 0 {
		return 0, errors.New("read cpu time: bad /proc stat")
	}
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}
