//go:build !linux

package cpushare

import (
	"errors"
	"runtime"
)

// errUnsupported: CPU affinity is only implemented on Linux.
var errUnsupported = errors.New("CPU affinity is not supported on " + runtime.GOOS)

// Online lists the cores this process may run on; Linux only.
func Online() ([]int, error) {
	out := make([]int, runtime.NumCPU())
	for i := range out {
		out[i] = i
	}
	return out, nil
}

// Apply pins the process to cores; Linux only.
func Apply(cores []int) error { return errUnsupported }
