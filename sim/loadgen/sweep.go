package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxSweepSteps bounds the points of a linear sweep (each is a whole run); a
// binary search runs a few of any number.
const MaxSweepSteps = 100

// Range is what a sweep varies, as perf_analyzer's --request-rate-range and
// --concurrency-range give it: from Start to End in steps of Step. Integer
// ranges (concurrency) hold whole numbers only. An Open range has no End:
// it goes up by Step until a point does not hold (perf_analyzer's END of
// 0), at most MaxSweepSteps points and the largest rate or concurrency a
// run takes.
type Range struct {
	Start, End, Step float64
	Integer          bool
	Open             bool
}

// ParseRange reads "START[:END[:STEP]]". Without END the range is START
// alone (perf_analyzer's --concurrency-range 4); without STEP an integer
// range steps by 1 and a rate range makes five points, START and END
// included. An END of 0 makes an open range, stepping by STEP (1 without
// it for an integer range, START for a rate range).
func ParseRange(spec string, integer bool) (Range, error) {
	parts := strings.Split(spec, ":")
	if len(parts) > 3 {
		return Range{}, fmt.Errorf("%w: range %q: give START, START:END or START:END:STEP", ErrConfig, spec)
	}
	if len(parts) == 1 {
		parts = append(parts, parts[0])
	}
	vals := make([]float64, len(parts))
	open := false
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if i == 1 && err == nil && v == 0 && len(spec) > 0 && strings.Contains(spec, ":") {
			open = true // perf_analyzer's END of 0: up until a step does not hold
			continue
		}
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return Range{}, fmt.Errorf("%w: range %q: %q is not a positive number", ErrConfig, spec, p)
		}
		if integer && v != math.Trunc(v) {
			return Range{}, fmt.Errorf("%w: range %q: %q is not a whole number", ErrConfig, spec, p)
		}
		vals[i] = v
	}
	r := Range{Start: vals[0], End: vals[1], Integer: integer, Open: open}
	if open {
		r.Step = r.Start
		switch {
		case len(vals) == 3:
			r.Step = vals[2]
		case integer:
			r.Step = 1
		}
		return r, nil
	}
	switch {
	case r.End < r.Start:
		return Range{}, fmt.Errorf("%w: range %q ends below its start", ErrConfig, spec)
	case integer && r.End > MaxConcurrency:
		return Range{}, fmt.Errorf("%w: range %q: at most %d requests in flight", ErrConfig, spec, MaxConcurrency)
	case !integer && r.End > MaxRate:
		return Range{}, fmt.Errorf("%w: range %q: at most %.0f requests/s", ErrConfig, spec, MaxRate)
	case len(vals) == 3:
		r.Step = vals[2]
	case integer:
		r.Step = 1
	case r.End > r.Start:
		r.Step = (r.End - r.Start) / 4
	default:
		r.Step = r.Start
	}
	return r, nil
}

// count is the number of points of a linear sweep.
func (r Range) count() int {
	if r.Open {
		most := MaxRate
		if r.Integer {
			most = MaxConcurrency
		}
		return min(MaxSweepSteps, int(math.Floor((most-r.Start)/r.Step+1e-9))+1)
	}
	// A step that divides the span up to rounding still reaches End.
	return int(math.Floor((r.End-r.Start)/r.Step+1e-9)) + 1
}

// Points are a linear sweep's values: Start, Start+Step, … up to End.
func (r Range) Points() []float64 {
	n := r.count()
	out := make([]float64, n)
	for i := range out {
		out[i] = r.Start + float64(i)*r.Step
	}
	return out
}

// SweepStep is one run of a sweep.
type SweepStep struct {
	// At is the step's total rate (requests/s) or concurrency.
	At float64 `json:"at"`
	// Holds says every model met the sweep's StepRule.
	Holds bool `json:"holds"`
	// Attainment is the lowest of the models' attainments here: answers
	// within the SLO over the requests due, sent or dropped by this
	// client (a request the client could not send for want of a free
	// slot is a miss too); Lowest names that model.
	Attainment float64 `json:"slo_attainment"`
	Lowest     string  `json:"lowest_model"`
	// MeanLatencyUS is the highest of the models' mean latencies here, in
	// microseconds, and Slowest names that model; judged against
	// StepRule.MaxMeanLatency when the rule has one.
	MeanLatencyUS float64 `json:"mean_latency_us,omitempty"`
	Slowest       string  `json:"slowest_model,omitempty"`
	// Run is the step's report, per model and summed.
	Run *MixReport `json:"run"`
}

// SweepMode is how a sweep walks its range.
type SweepMode uint8

// The ways a sweep walks its range.
const (
	// SweepUntilMiss runs each point in order until one does not hold (a
	// load the server cannot keep up with overloads the heavier ones too).
	SweepUntilMiss SweepMode = iota
	// SweepWhole runs every point, past those that do not hold: the
	// whole curve, as perf_analyzer's ranges run without a latency
	// threshold.
	SweepWhole
	// SweepSearch bisects the range for the highest point that holds.
	SweepSearch
)

// StepRule is what a step of a sweep, or a run judged alone, must do to
// hold: every model answer MinAttainment of its due requests within its
// SLO (0: not asked), and every model's mean latency be at most
// MaxMeanLatency (0: not asked; perf_analyzer's --latency-threshold without
// a percentile). A run where no request fell due holds nothing.
type StepRule struct {
	MinAttainment  float64
	MaxMeanLatency time.Duration
}

// SweepResult is a sweep's steps in the order they ran, and what it found.
type SweepResult struct {
	// MinAttainment is the share a step had to reach to hold, and
	// MaxMeanLatencyMS the mean latency it had to stay within (the
	// sweep's StepRule; 0 for one not asked).
	MinAttainment    float64 `json:"min_attainment"`
	MaxMeanLatencyMS float64 `json:"max_mean_latency_ms,omitempty"`
	// Search is set for a binary search, unset for a linear sweep; Whole
	// for a linear one that ran every point (SweepWhole).
	Search bool        `json:"binary_search"`
	Whole  bool        `json:"whole_range,omitempty"`
	Steps  []SweepStep `json:"steps"`
	// Held is the highest step that held, Failed the lowest that did not
	// (nil when none did, or none failed); over a whole range a step above
	// Failed may have held.
	Held   *SweepStep `json:"highest_held"`
	Failed *SweepStep `json:"lowest_failed"`
	// Skipped counts a linear sweep's points above a step that did not
	// hold, which it does not run.
	Skipped int `json:"skipped"`
	// Interrupted is set when the context ended during a step; that step
	// is the last, and does not count as held or failed.
	Interrupted bool `json:"interrupted"`
}

// SweepRun runs one step of a sweep at a total rate or concurrency.
type SweepRun func(ctx context.Context, at float64) (*MixReport, error)

// Sweep runs a load at each value of r, in order, until one does not hold
// (SweepUntilMiss) or through the whole range (SweepWhole), or bisects r
// for the highest value that holds (SweepSearch): Start, End, then
// midpoints until the gap between the highest that held and the lowest
// that did not is at most Step. each, when not nil, sees every step as it
// ends. A run that cannot start ends the sweep with its error; one that
// ctx interrupts ends it with the steps so far.
func Sweep(ctx context.Context, r Range, mode SweepMode, rule StepRule, run SweepRun, each func(SweepStep)) (*SweepResult, error) {
	search := mode == SweepSearch
	switch {
	case r.Open && search:
		return nil, fmt.Errorf("%w: an open range (END 0) has no end to search up to: give END", ErrConfig)
	case r.Open && mode == SweepWhole:
		return nil, fmt.Errorf("%w: an open range (END 0) goes up until a step does not hold: not with the whole range", ErrConfig)
	}
	res := &SweepResult{MinAttainment: rule.MinAttainment, MaxMeanLatencyMS: float64(rule.MaxMeanLatency) / float64(time.Millisecond), Search: search, Whole: mode == SweepWhole}
	held, failed := -1, -1 // indices into res.Steps
	defer func() {
		if held >= 0 {
			res.Held = &res.Steps[held]
		}
		if failed >= 0 {
			res.Failed = &res.Steps[failed]
		}
	}()
	// step runs at and records it; false when the sweep must end there.
	step := func(at float64) (bool, error) {
		mix, err := run(ctx, at)
		if mix == nil {
			if err == nil {
				err = errors.New("no report")
			}
			return false, fmt.Errorf("sweep at %v: %w", at, err)
		}
		s := Judge(at, mix, rule)
		res.Steps = append(res.Steps, s)
		if each != nil {
			each(s)
		}
		if err != nil || ctx.Err() != nil {
			res.Interrupted = true
			return false, nil
		}
		i := len(res.Steps) - 1
		switch {
		case s.Holds && (held < 0 || at > res.Steps[held].At):
			held = i
		case !s.Holds && (failed < 0 || at < res.Steps[failed].At):
			failed = i
		}
		return true, nil
	}
	if !search {
		if n := r.count(); n > MaxSweepSteps {
			return res, fmt.Errorf("%w: the range from %v to %v has %d steps, more than %d: give a larger STEP, or search it (--binary-search)", ErrConfig, r.Start, r.End, n, MaxSweepSteps)
		}
		points := r.Points()
		for i, at := range points {
			if ok, err := step(at); err != nil || !ok {
				return res, err
			}
			if failed >= 0 && mode == SweepUntilMiss {
				if !r.Open { // an open range has no points above to skip
					res.Skipped = len(points) - i - 1
				}
				break
			}
		}
		return res, nil
	}
	for _, at := range []float64{r.Start, r.End} {
		if ok, err := step(at); err != nil || !ok {
			return res, err
		}
		if failed >= 0 || at == r.End {
			break // none holds, or the whole range does
		}
	}
	for held >= 0 && failed >= 0 && res.Steps[failed].At-res.Steps[held].At > r.Step {
		mid := (res.Steps[held].At + res.Steps[failed].At) / 2
		if r.Integer {
			mid = math.Floor(mid)
		}
		if mid <= res.Steps[held].At {
			break
		}
		if ok, err := step(mid); err != nil || !ok {
			return res, err
		}
	}
	return res, nil
}

// Judge finds a run's lowest attainment (a model's requests answered within
// its SLO over those due) and highest mean latency, and whether they hold
// rule: a run where no request was due holds nothing, nor, under a mean
// latency bound, one where a model with requests due had none answered. A
// sweep judges each step with it; a single run given a floor is judged the
// same way.
func Judge(at float64, mix *MixReport, rule StepRule) SweepStep {
	s := SweepStep{At: at, Run: mix}
	unanswered := false
	for _, r := range mix.Models {
		if r.Scheduled == 0 {
			continue // nothing was due: nothing to judge
		}
		a := float64(r.WithinSLO) / float64(r.Scheduled)
		if s.Lowest == "" || a < s.Attainment {
			s.Attainment, s.Lowest = a, r.Model
		}
		if r.Latency.Count == 0 {
			unanswered = true
			continue
		}
		if mean := float64(r.Latency.Mean) / float64(time.Microsecond); s.Slowest == "" || mean > s.MeanLatencyUS {
			s.MeanLatencyUS, s.Slowest = mean, r.Model
		}
	}
	s.Holds = s.Lowest != "" && s.Attainment >= rule.MinAttainment
	if rule.MaxMeanLatency > 0 {
		s.Holds = s.Holds && !unanswered && s.MeanLatencyUS <= float64(rule.MaxMeanLatency)/float64(time.Microsecond)
	}
	return s
}
