package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrBadStat is returned for a /proc/<pid>/stat line without its command
// name in parentheses.
var ErrBadStat = errors.New("no command name in /proc stat")

// Stat reads /proc/<pid>/stat and returns its fields from the state on
// (StatFields); an error wrapping os.ErrNotExist when no such process runs.
func Stat(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, fmt.Errorf("read stat of process %d: %w", pid, err)
	}
	return StatFields(b)
}

// StatFields splits a /proc/<pid>/stat line after its command name, which
// may hold spaces and parentheses: the first field returned is the state
// (field 3 of proc(5)), so field k of proc(5) is at index k-3.
func StatFields(b []byte) ([]string, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, ErrBadStat
	}
	return strings.Fields(string(b[i+1:])), nil
}
