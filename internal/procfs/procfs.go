// Package procfs reads the kernel's files under /proc: the "Key: value kB"
// files (/proc/meminfo, /proc/<pid>/status) one field at a time, and a
// process's /proc/<pid>/stat line.
package procfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrNoField is returned when a file has no line for the field asked for.
var ErrNoField = errors.New("no such field")

// KiBField reads the field key of a "Key:   1234 kB" file, such as MemTotal
// of /proc/meminfo or VmHWM of /proc/self/status, in bytes.
func KiBField(file, key string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("read %s of %s: %w", key, file, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("read %s of %s: %q is not a count of kB", key, file, strings.TrimSpace(v))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<53 {
			return 0, fmt.Errorf("read %s of %s: %q is not a count of kB", key, file, strings.TrimSpace(v))
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("read %s of %s: %w", key, file, ErrNoField)
}
