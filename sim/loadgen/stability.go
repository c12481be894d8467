package loadgen

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"
)

// Default measurement windows, as perf_analyzer measures by default.
const (
	// DefaultStability is the spread three windows may have and agree: the
	// largest over the smallest of their throughputs, and of their
	// latencies, at most 1.1.
	DefaultStability = 0.10
	// DefaultMaxTrials is the most windows a run measures.
	DefaultMaxTrials = 10
	// stableWindows is how many windows in a row must agree.
	stableWindows = 3
	// MaxTrials bounds Windows.MaxTrials: a run keeps each window's
	// counts until it ends.
	MaxTrials = 10000
	// countWindowLeast is the shortest a count window lasts, however soon
	// its requests fell due.
	countWindowLeast = time.Second
)

// Windows has a run measure in windows, one after the other on the same
// schedule, until the last three agree, as perf_analyzer measures: the
// report then counts those three windows alone, and says what each window
// measured (Report.Trials) and whether they agreed (Report.Stable).
type Windows struct {
	// Requests, when above 0, makes each window last until this many
	// requests fell due in it and at least a second passed (perf_analyzer's
	// count_windows and --measurement-request-count); 0: each window lasts
	// Config.Duration (perf_analyzer's time_windows and -p).
	Requests int64 `json:"window_requests,omitempty"`
	// Stability is how far the windows may differ and agree, a fraction
	// (perf_analyzer's --stability-percentage over 100): the largest of
	// the last three windows' throughputs over their smallest, and the
	// same of their latencies, at most 1 + Stability. 0: DefaultStability.
	Stability float64 `json:"stability"`
	// MaxTrials is the most windows measured (perf_analyzer's
	// --max-trials); when the last three of them do not agree the run ends
	// with Report.Stable false. 0: DefaultMaxTrials.
	MaxTrials int `json:"max_trials"`
	// Percentile is the latency compared, a percentile of each window's
	// answers (perf_analyzer's --percentile); 0: their mean.
	Percentile float64 `json:"percentile,omitempty"`
}

// withDefaults fills in the zero fields, or says which is out of range.
func (w Windows) withDefaults() (Windows, error) {
	switch {
	case w.Requests < 0:
		return w, fmt.Errorf("%w: a window of %d requests; give 1 or more", ErrConfig, w.Requests)
	case w.Stability < 0 || w.Stability > 10:
		return w, fmt.Errorf("%w: stability %g; give a fraction above 0 (0.1 lets windows differ by 10%%), at most 10", ErrConfig, w.Stability)
	case w.MaxTrials < 0:
		return w, fmt.Errorf("%w: %d trials; give %d or more", ErrConfig, w.MaxTrials, stableWindows)
	case w.MaxTrials > MaxTrials:
		return w, fmt.Errorf("%w: %d trials; give at most %d", ErrConfig, w.MaxTrials, MaxTrials)
	case w.MaxTrials > 0 && w.MaxTrials < stableWindows:
		return w, fmt.Errorf("%w: %d trials: %d windows in a row must agree, so give %d or more", ErrConfig, w.MaxTrials, stableWindows, stableWindows)
	case w.Percentile < 0 || w.Percentile > 100:
		return w, fmt.Errorf("%w: percentile %g; give 1 to 100, or 0 for the mean", ErrConfig, w.Percentile)
	}
	if w.Stability == 0 {
		w.Stability = DefaultStability
	}
	if w.MaxTrials == 0 {
		w.MaxTrials = DefaultMaxTrials
	}
	return w, nil
}

// Trial is what one measurement window measured.
type Trial struct {
	// Duration is the window's length.
	Duration time.Duration `json:"-"`
	// Due is how many requests fell due in it; OK how many of them were
	// answered 200.
	Due int64 `json:"due"`
	OK  int64 `json:"ok"`
	// Throughput is OK per second of the window.
	Throughput float64 `json:"throughput"`
	// Latency is the window's mean latency, or its Windows.Percentile.
	Latency time.Duration `json:"-"`
}

// agree says whether trials, the last windows measured, agree within
// stability: stableWindows of them, each with an answer, whose largest
// throughput and latency are at most 1 + stability times their smallest.
func agree(trials []Trial, stability float64) bool {
	if len(trials) < stableWindows {
		return false
	}
	last := trials[len(trials)-stableWindows:]
	lowT, highT := last[0].Throughput, last[0].Throughput
	lowL, highL := last[0].Latency, last[0].Latency
	for _, t := range last {
		if t.OK == 0 {
			return false
		}
		lowT, highT = min(lowT, t.Throughput), max(highT, t.Throughput)
		lowL, highL = min(lowL, t.Latency), max(highL, t.Latency)
	}
	return highT <= lowT*(1+stability) && float64(highL) <= float64(lowL)*(1+stability)
}

// segments places each request of a run's schedule, by the moment it falls
// due, in the warm-up or in a measurement window, and says when the
// schedule is over. Only the schedule calls it (a closed loop's senders
// under their lock); stopped is the one field another goroutine writes.
type segments struct {
	// begin is the schedule's first moment.
	begin time.Time
	// The warm-up lasts until warmEnd and until warmRequests fell due in
	// it (warmed).
	warmEnd      time.Time
	warmRequests int64
	warmed       int64
	// length is a time window's length, and a count window's least;
	// count is a count window's least requests (0: time windows); limit
	// ends the one window at this many requests (Config.Requests).
	length time.Duration
	count  int64
	limit  int64
	// most is how many windows may open.
	most int
	// windows are those opened, the last one open until closed (its end
	// set).
	windows []*tally
	// closed hears each window as it closes (buffered for all).
	closed chan *tally
	// stopped is set once the windows agreed: no more requests.
	stopped  atomic.Bool
	newTally func() *tally
	// onBoundary is Config.OnBoundary.
	onBoundary func(int)
}

// newSegments lays out cfg's schedule from begin, its first moment.
func newSegments(cfg Config, begin time.Time, newTally func() *tally) *segments {
	s := &segments{begin: begin, warmEnd: begin.Add(cfg.Warmup), warmRequests: cfg.WarmupRequests, length: cfg.Duration, limit: cfg.Requests, most: 1,
		newTally: newTally, onBoundary: cfg.OnBoundary}
	if w := cfg.Windows; w != nil {
		s.most, s.count = w.MaxTrials, w.Requests
		if s.count > 0 {
			s.length = countWindowLeast
		}
	}
	s.closed = make(chan *tally, s.most)
	return s
}

// warming says whether a request due at at falls in the warm-up.
func (s *segments) warming(at time.Time) bool {
	return len(s.windows) == 0 && (at.Before(s.warmEnd) || s.warmed < s.warmRequests)
}

// current is the open window, nil before the first and once the last
// closed.
func (s *segments) current() *tally {
	if len(s.windows) == 0 || !s.windows[len(s.windows)-1].end.IsZero() {
		return nil
	}
	return s.windows[len(s.windows)-1]
}

// closes says whether a request due at at closes window t: it falls past
// a time window's end, or t holds its count and its least time.
func (s *segments) closes(t *tally, at time.Time) bool {
	switch {
	case s.limit > 0 && t.scheduled >= s.limit:
		return true
	case s.count > 0:
		return t.scheduled >= s.count && !at.Before(t.start.Add(s.length))
	default:
		return !at.Before(t.start.Add(s.length))
	}
}

// over says whether the schedule ends before a request due at at: the
// windows agreed, or the last window would close.
func (s *segments) over(at time.Time) bool {
	if s.stopped.Load() {
		return true
	}
	t := s.current()
	switch {
	case t == nil || !s.closes(t, at):
		return false
	case s.count > 0 || s.limit > 0:
		return len(s.windows) == s.most // a request closes one window at the most
	default:
		// at may fall past several time windows' ends.
		return len(s.windows)+int(at.Sub(t.start)/s.length) > s.most
	}
}

// place puts a request due at at in the warm-up (nil) or in a window,
// closing the windows it falls past and opening the next, and counts it
// there; it returns the window and the second of it the request falls
// in. The caller has asked over first.
func (s *segments) place(at time.Time) (*tally, int) {
	if s.warming(at) {
		s.warmed++
		return nil, 0
	}
	if s.current() == nil {
		start := s.warmEnd
		if s.warmRequests > 0 && at.After(start) {
			start = at // the warm-up ended with its count, here
		}
		s.openAt(start)
	}
	for t := s.current(); s.closes(t, at); t = s.current() {
		end := t.start.Add(s.length)
		if s.count > 0 || s.limit > 0 {
			end = at
		}
		s.closeAt(end)
		s.openAt(end)
	}
	t := s.current()
	t.scheduled++
	second := int(at.Sub(t.start) / time.Second)
	t.due = grow(t.due, second)
	t.due[second].Due++
	return t, second
}

// openAt opens the next window at start.
func (s *segments) openAt(start time.Time) {
	t := s.newTally()
	t.start = start
	s.windows = append(s.windows, t)
	s.boundary(len(s.windows) - 1)
}

// boundary tells onBoundary that the schedule reached boundary i.
func (s *segments) boundary(i int) {
	if s.onBoundary != nil {
		s.onBoundary(i)
	}
}

// closeAt closes the open window at end and tells closed.
func (s *segments) closeAt(end time.Time) {
	t := s.current()
	t.end = end
	if end.Before(t.start) {
		t.end = t.start // cut short in the warm-up
	}
	s.closed <- t
}

// finish ends the schedule at now: it closes the open window (opening the
// first when none opened, so that a report has its window), at the end of
// its time unless the run was cut short or a count ended it, and tells
// closed that no window follows.
func (s *segments) finish(now time.Time, cut bool) {
	if len(s.windows) == 0 {
		s.openAt(s.warmEnd)
	}
	if t := s.current(); t != nil {
		end := now
		if !cut && !(s.limit > 0 && t.scheduled >= s.limit) && s.count == 0 {
			end = t.start.Add(s.length)
		}
		s.closeAt(end)
		s.boundary(len(s.windows))
	}
	close(s.closed)
}

// trial is what window t measured, its latency the mean of its answers or
// their percentile p; the window's requests are all answered.
func (t *tally) trial(p float64) Trial {
	d := t.end.Sub(t.start)
	tr := Trial{Duration: d, Due: t.scheduled, OK: t.ok}
	if d > 0 {
		tr.Throughput = float64(t.ok) / d.Seconds()
	}
	if p > 0 {
		tr.Latency = time.Duration(t.latency.ValueAtQuantile(p))
	} else {
		tr.Latency = time.Duration(t.latency.Mean())
	}
	return tr
}

// reported are the windows the report counts: the one window, or the last
// three measured (those that agreed, when they did).
func (g *generator) reported() []*tally {
	ws := g.seg.windows
	if g.cfg.Windows == nil {
		return ws
	}
	last := len(g.checked) // the windows measured, the first ones
	if g.stableAt >= 0 {
		last = g.stableAt + 1
	}
	if last == 0 {
		return ws[:1] // cut short before one was measured: the first, as far as it went
	}
	return ws[max(0, last-stableWindows):last]
}

// mergeTallies adds windows ts, in order, into one spanning them: their
// counts summed, histograms merged, and each window's seconds added where
// they fall from the first window's start (windows shorter than a second
// share one; a window that starts within a second counts from its start).
func mergeTallies(ts []*tally) *tally {
	if len(ts) == 1 {
		one := ts[0]
		one.seconds = secondsOf(one)
		return one
	}
	m := newTally()
	m.start = ts[0].start
	var span time.Duration
	for _, t := range ts {
		span += t.end.Sub(t.start)
		m.scheduled += t.scheduled
		m.sent += t.sent
		m.dropped += t.dropped
		m.maxInFlight = max(m.maxInFlight, t.maxInFlight)
		m.ok += t.ok
		m.within += t.within
		m.respBytes += t.respBytes
		for k, n := range t.failed {
			m.failed[k] += n
		}
		if m.firstError == "" {
			m.firstError = t.firstError
		}
		m.latency.Merge(t.latency)
		m.exported = append(m.exported, t.exported...)
		m.exportCut = m.exportCut || t.exportCut
		m.lag.Merge(t.lag)
		offset := int(t.start.Sub(m.start) / time.Second)
		for i, s := range secondsOf(t) {
			m.seconds = grow(m.seconds, offset+i)
			at := &m.seconds[offset+i]
			at.Due, at.Dropped, at.OK, at.Within, at.Failed = at.Due+s.Due, at.Dropped+s.Dropped, at.OK+s.OK, at.Within+s.Within, at.Failed+s.Failed
		}
	}
	m.end = m.start.Add(span)
	return m
}

// secondsOf is window t's seconds, the schedule's counts (due, dropped)
// with the workers' (answered, failed).
func secondsOf(t *tally) []Second {
	ss := grow(t.seconds, len(t.due)-1)
	for i, d := range t.due {
		ss[i].Due, ss[i].Dropped = d.Due, d.Dropped
	}
	return ss
}

// MarshalJSON adds the durations in readable units.
func (t Trial) MarshalJSON() ([]byte, error) {
	type plain Trial
	return json.Marshal(struct {
		plain
		DurationS float64 `json:"duration_s"`
		LatencyUS float64 `json:"latency_us"`
	}{plain(t), t.Duration.Seconds(), float64(t.Latency) / float64(time.Microsecond)})
}
