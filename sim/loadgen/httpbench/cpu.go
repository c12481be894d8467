package httpbench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 on
// Linux whatever the kernel's own tick rate.
const userHZ = 100

// ProcessCPU is a process's user + system CPU time from /proc/<pid>/stat.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("read cpu time: %w", err)
	}
	return parseStat(b)
}

// parseStat reads utime and stime from a /proc/<pid>/stat line. The command
// name (field 2) may hold spaces and parentheses; the fields after its last
// ')' start at state (field 3), so utime (field 14) and stime (15) are the
// 12th and 13th of them.
func parseStat(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("read cpu time: no command name in /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("read cpu time: short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil || utime < 0 || stime < 0 {
		return 0, errors.New("read cpu time: bad /proc stat")
	}
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}
