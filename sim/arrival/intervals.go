package arrival

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ReadIntervals decodes a file of gaps between arrivals, one a line in
// microseconds, as perf_analyzer's --request-intervals file gives them:
// the first is the gap before the first request, and a replay goes from
// the last back to the first. Blank lines are skipped;
// at least one gap, and some time in all, is needed.
func ReadIntervals(r io.Reader) (*Trace, error) {
	sc := bufio.NewScanner(r)
	times := []int64{0}
	var at int64
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		us, err := strconv.ParseFloat(s, 64)
		if err != nil || us < 0 || math.IsInf(us, 0) || us > math.MaxInt64/1e3 {
			return nil, fmt.Errorf("%w: line %d: %q is not a number of microseconds", ErrBadTrace, line, s)
		}
		if len(times) > MaxTraceRows {
			return nil, fmt.Errorf("%w: more than %d intervals", ErrBadTrace, MaxTraceRows)
		}
		at += int64(math.Round(us * 1e3))
		if at < 0 {
			return nil, fmt.Errorf("%w: line %d: the intervals add up past the longest time", ErrBadTrace, line)
		}
		times = append(times, at)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadTrace, err)
	}
	if len(times) < 2 {
		return nil, fmt.Errorf("%w: no interval in it", ErrBadTrace)
	}
	t, err := newTrace(times)
	if err != nil {
		return nil, err
	}
	t.cycle = true
	return t, nil
}
