package arrival

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrBadTrace is wrapped by every error about a trace that cannot be read
// or replayed.
var ErrBadTrace = errors.New("bad trace")

// MaxTraceRows bounds how many timestamps ReadTrace keeps.
const MaxTraceRows = 50_000_000

// timeLayouts are the timestamp spellings a trace may use. The first is the
// Azure LLM inference traces' ("2023-11-16 18:17:03.9799600",
// shared/data/azure/README); the fraction may have any number of digits.
var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	time.RFC3339Nano,
}

// Trace is a recorded sequence of arrival times.
type Trace struct {
	gaps []time.Duration // between consecutive arrivals, in time order
	span time.Duration   // first to last arrival
	// cycle: the gaps repeat as they are, the first after the last (a
	// file of intervals); otherwise a replay puts the mean gap between
	// the last arrival and the first.
	cycle bool
}

// ReadTrace decodes a CSV trace of arrival times. The column named
// TIMESTAMP (any case; "time" also works) holds them, or the first column
// when the file has no header. A timestamp is a date and time such as
// "2023-11-16 18:17:03.9799600" (the Azure traces' form) or RFC 3339, or a
// plain number of seconds. Rows need not be in order; at least two
// arrivals at different times are needed.
func ReadTrace(r io.Reader) (*Trace, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	col, line := 0, 0
	var times []int64 // ns since the first parse's epoch
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line++
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadTrace, err)
		}
		if line == 1 {
			if c, ok := headerColumn(rec); ok {
				col = c
				continue
			}
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if col >= len(rec) {
			return nil, fmt.Errorf("%w: line %d has %d fields, the timestamp is field %d", ErrBadTrace, line, len(rec), col+1)
		}
		ns, err := parseTimestamp(rec[col])
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrBadTrace, line, err)
		}
		if len(times) >= MaxTraceRows {
			return nil, fmt.Errorf("%w: more than %d arrivals", ErrBadTrace, MaxTraceRows)
		}
		times = append(times, ns)
	}
	return newTrace(times)
}

// NewTrace builds a trace from arrival times (any order).
func NewTrace(times []time.Time) (*Trace, error) {
	ns := make([]int64, len(times))
	for i, t := range times {
		ns[i] = t.UnixNano()
	}
	return newTrace(ns)
}

func newTrace(times []int64) (*Trace, error) {
	if len(times) < 2 {
		return nil, fmt.Errorf("%w: %d arrivals; at least two are needed", ErrBadTrace, len(times))
	}
	slices.Sort(times)
	t := &Trace{gaps: make([]time.Duration, len(times)-1), span: time.Duration(times[len(times)-1] - times[0])}
	if t.span <= 0 {
		return nil, fmt.Errorf("%w: every arrival is at the same time", ErrBadTrace)
	}
	for i := 1; i < len(times); i++ {
		t.gaps[i-1] = time.Duration(times[i] - times[i-1])
	}
	return t, nil
}

// headerColumn finds the timestamp column in a header row; ok is false when
// the row is data.
func headerColumn(rec []string) (int, bool) {
	for i, f := range rec {
		switch strings.ToLower(strings.TrimSpace(f)) {
		case "timestamp", "time":
			return i, true
		}
	}
	if len(rec) > 0 {
		if _, err := parseTimestamp(rec[0]); err != nil {
			return 0, true // a header without a known name: the first column
		}
	}
	return 0, false
}

// parseTimestamp reads one timestamp as nanoseconds.
func parseTimestamp(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(v) || math.Abs(v) > math.MaxInt64/1e9 {
			return 0, fmt.Errorf("timestamp %q is out of range", s)
		}
		return int64(math.Round(v * 1e9)), nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if y := t.Year(); y < 1678 || y > 2261 { // the range of UnixNano
				return 0, fmt.Errorf("timestamp %q is out of range", s)
			}
			return t.UnixNano(), nil
		}
	}
	return 0, fmt.Errorf("timestamp %q is neither a date and time (2023-11-16 18:17:03.97996, RFC 3339) nor seconds", s)
}

// Len is the number of arrivals.
func (t *Trace) Len() int { return len(t.gaps) + 1 }

// Span is the time from the first arrival to the last.
func (t *Trace) Span() time.Duration { return t.span }

// Rate is the trace's own mean rate, arrivals per second: the gaps per
// second of span.
func (t *Trace) Rate() float64 { return float64(len(t.gaps)) / t.span.Seconds() }

// CV is the coefficient of variation of the trace's gaps.
func (t *Trace) CV() float64 {
	var sum, sq float64
	for _, g := range t.gaps {
		s := g.Seconds()
		sum += s
		sq += s * s
	}
	n := float64(len(t.gaps))
	mean := sum / n
	return math.Sqrt(max(sq/n-mean*mean, 0)) / mean
}

// Replay returns the trace's arrivals with every gap scaled so that the
// mean rate is rate (arrivals per second). It starts at the first arrival
// and loops when the trace is exhausted; the gap from the last arrival back
// to the first is the trace's mean gap, so looping keeps the mean rate (a
// file of intervals goes on with its first gap: its gaps are the cycle).
func (t *Trace) Replay(rate float64) (*Replay, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("%w: %v requests/s; give a positive rate", ErrBadRate, rate)
	}
	return &Replay{t: t, factor: t.Rate() / rate, rate: rate}, nil
}

// Replay is a trace played back at a chosen mean rate.
type Replay struct {
	t      *Trace
	factor float64 // multiplies the recorded gaps
	rate   float64
	next   int
	loops  int
}

// Next returns the next recorded gap, scaled.
func (r *Replay) Next() time.Duration {
	var g time.Duration
	switch {
	case r.next < len(r.t.gaps):
		g = r.t.gaps[r.next]
		r.next++
	case r.t.cycle:
		g = r.t.gaps[0]
		r.next = 1
		r.loops++
	default:
		g = time.Duration(int64(r.t.span) / int64(len(r.t.gaps)))
		r.next = 0
		r.loops++
	}
	return seconds(g.Seconds() * r.factor)
}

// Rate is the mean rate of the replay.
func (r *Replay) Rate() float64 { return r.rate }

// Loops is how many times the replay has wrapped around to the trace's
// first arrival.
func (r *Replay) Loops() int { return r.loops }

// PeakFactor is the rate of the busiest of bins equal stretches of the
// trace over its mean rate: how far above its mean a trace scaled to a mean
// rate peaks, at that resolution (1 for bins < 1).
func (t *Trace) PeakFactor(bins int) float64 {
	counts := t.Bins(bins)
	if counts == nil {
		return 1
	}
	return float64(slices.Max(counts)) * float64(bins) / float64(t.Len())
}

// Bins counts the arrivals in bins equal stretches of the span (nil for
// bins < 1).
func (t *Trace) Bins(bins int) []int {
	if bins < 1 || t.span <= 0 {
		return nil
	}
	counts := make([]int, bins)
	var at time.Duration
	counts[0]++
	for _, g := range t.gaps {
		at += g
		counts[min(int(int64(at)*int64(bins)/int64(t.span)), bins-1)]++
	}
	return counts
}
