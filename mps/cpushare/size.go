package cpushare

import (
	"errors"
	"fmt"
	"math"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrNoWholeCore: the size is less than half a core of the machine.
	ErrNoWholeCore = errors.New("size maps to no whole core")
	// ErrBadSize: the size is not in 1..100.
	ErrBadSize = errors.New("size must be in 1..100")
	// ErrNoFreeCores: not enough unallocated cores are left.
	ErrNoFreeCores = errors.New("not enough free cores")
	// ErrBadCoreList: a core list could not be read.
	ErrBadCoreList = errors.New("bad core list")
)

// CoresForSize maps a gpu-let size (percent of the machine) to whole cores:
// size% of n, rounded half up. A size that rounds to no core is an error,
// never silently one core, so that a plan never assumes more than it gets.
func CoresForSize(size, n int) (int, error) {
	if size < 1 || size > 100 {
		return 0, fmt.Errorf("map size %d to cores: %w", size, ErrBadSize)
	}
	if n < 1 {
		return 0, fmt.Errorf("map size %d to cores of a %d-core machine: %w", size, n, ErrNoWholeCore)
	}
	k := int(math.Floor(float64(size)*float64(n)/100 + 0.5))
	if k < 1 {
		return 0, fmt.Errorf("map size %d%% to cores: %w: %d%% of %d cores is %.2f cores (smallest size: %d%%)",
			size, ErrNoWholeCore, size, n, float64(size)*float64(n)/100, MinSize(n))
	}
	return k, nil
}

// SizeOf is the size in percent that k of n cores really are, rounded.
func SizeOf(k, n int) int {
	if n < 1 {
		return 0
	}
	return int(math.Round(float64(k) * 100 / float64(n)))
}

// MinSize is the smallest size in percent that maps to one core of n.
// Half a core rounds up to one, so the answer is ⌈50/n⌉.
func MinSize(n int) int {
	if n < 1 {
		return 100
	}
	return max(1, (50+n-1)/n)
}
