package cpushare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// FormatList writes cores as a comma-separated list ("0,1,5"), ascending.
func FormatList(cores []int) string {
	c := slices.Clone(cores)
	slices.Sort(c)
	parts := make([]string, len(c))
	for i, v := range c {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

// ParseList reads a core list as Linux writes it: comma-separated cores and
// ranges ("0,2-4,7"). The result is ascending without repeats; an empty list
// is an error.
func ParseList(s string) ([]int, error) {
	var out []int
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("parse core list %q: %w: empty", s, ErrBadCoreList)
	}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("parse core list %q: %w: %q", s, ErrBadCoreList, part)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil || b < a {
				return nil, fmt.Errorf("parse core list %q: %w: %q", s, ErrBadCoreList, part)
			}
		}
		if b >= maxCPU {
			return nil, fmt.Errorf("parse core list %q: %w: core %d beyond %d", s, ErrBadCoreList, b, maxCPU-1)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// maxCPU is the number of CPUs a Linux cpu_set_t holds (CPU_SETSIZE).
const maxCPU = 1024
