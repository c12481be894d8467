package procfs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// HostCPUTime reads the host's CPU time of file (/proc/stat) in clock
// ticks since boot, over every CPU: busy is all but idle and iowait, total
// all of user, nice, system, idle, iowait, irq, softirq and steal (guest
// time is in user already).
func HostCPUTime(file string) (busy, total uint64, err error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, 0, fmt.Errorf("read host cpu time: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[0] != "cpu" {
			continue
		}
		var idle uint64
		for i, v := range f[1:min(len(f), 9)] {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("read host cpu time of %s: field %d %q is not a count", file, i+1, v)
			}
			total += n
			if i == 3 || i == 4 { // idle, iowait
				idle += n
			}
		}
		return total - idle, total, nil
	}
	return 0, 0, fmt.Errorf("read host cpu time of %s: %w", file, ErrNoField)
}
