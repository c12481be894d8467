package procfs

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 on
// Linux whatever the kernel's own tick rate.
const userHZ = 100

// ErrShortStat is returned for a /proc/<pid>/stat line without readable
// utime and stime fields.
var ErrShortStat = errors.New("no cpu times in /proc stat")

// CPUTime is a process's user + system CPU time from /proc/<pid>/stat, to
// the kernel's 10 ms tick; an error wrapping os.ErrNotExist when no such
// process runs.
func CPUTime(pid int) (time.Duration, error) {
	f, err := Stat(pid)
	if err != nil {
		return 0, fmt.Errorf("read cpu time: %w", err)
	}
	return CPUTimeOf(f)
}

// CPUTimeOf is utime (field 14 of proc(5)) plus stime (15) of a stat line's
// fields as StatFields splits them.
func CPUTimeOf(f []string) (time.Duration, error) {
	if len(f) < 13 {
		return 0, fmt.Errorf("read cpu time: %w", ErrShortStat)
	}
	utime, err1 := strconv.ParseInt(f[14-3], 10, 64)
	stime, err2 := strconv.ParseInt(f[15-3], 10, 64)
	if err1 != nil || err2 != nil || utime < 0 || stime < 0 {
		return 0, fmt.Errorf("read cpu time: %w", ErrShortStat)
	}
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}
