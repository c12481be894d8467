package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/sim/arrival"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sweepWarmup is each step's warm-up unless --warmup gives one: time for
// the daemon to see the step's rate and re-plan for it (a surge re-plans
// within a second or two; starting a gpu-let's executor takes a few more).
const sweepWarmup = 5 * time.Second

// sweepFlags are load's flags for a sweep over rates or concurrencies.
type sweepFlags struct {
	rateRange, concurrencyRange string
	search, whole               bool
	minAttainment               float64
	// meanBound is perf_analyzer's --latency-threshold without a
	// percentile (loadFloor.meanBound); 0 without it.
	meanBound time.Duration
}

// rule is what a step, or a run judged alone, must do to hold.
func (s *sweepFlags) rule() loadgen.StepRule {
	return loadgen.StepRule{MinAttainment: s.minAttainment, MaxMeanLatency: s.meanBound}
}

// ruleWords says rule as the sweep's header does: "every model answers
// 99.0% of its requests due within its SLO", "every model's mean latency
// is within 5ms", or both.
func ruleWords(rule loadgen.StepRule) string {
	var parts []string
	if rule.MinAttainment > 0 {
		parts = append(parts, fmt.Sprintf("every model answers %s of its requests due within its SLO", percent(rule.MinAttainment)))
	}
	if rule.MaxMeanLatency > 0 {
		parts = append(parts, fmt.Sprintf("every model's mean latency is within %s", dur(rule.MaxMeanLatency)))
	}
	return strings.Join(parts, " and ")
}

// missedRule says why step st did not hold rule: the model over the mean
// latency bound, or short of the share within its SLO.
func missedRule(st *loadgen.SweepStep, rule loadgen.StepRule) string {
	switch {
	case st.Lowest == "":
		return "no request was due"
	case rule.MaxMeanLatency > 0 && st.Slowest == "":
		return "no request was answered"
	case rule.MaxMeanLatency > 0 && st.MeanLatencyUS > float64(rule.MaxMeanLatency)/float64(time.Microsecond):
		return fmt.Sprintf("%s's mean latency %s, over %s", st.Slowest, dur(time.Duration(st.MeanLatencyUS*float64(time.Microsecond))), dur(rule.MaxMeanLatency))
	case rule.MaxMeanLatency > 0 && st.Attainment >= rule.MinAttainment:
		return "a model's requests went unanswered"
	case len(st.Run.Models) > 1:
		return fmt.Sprintf("%s answered %s within its SLO", st.Lowest, percent(st.Attainment))
	}
	return percent(st.Attainment) + " within the SLO"
}

func (s *sweepFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.rateRange, "rate-range", "", "run at each total rate from START to END in steps of STEP (START[:END[:STEP]]; five steps without STEP, START alone without END; END 0: up by STEP, START without it, with no end) until one does not hold")
	f.StringVar(&s.concurrencyRange, "concurrency-range", "", "a closed loop at each concurrency from START to END (START[:END[:STEP]], STEP 1 without it, START alone without END, as perf_analyzer's --concurrency-range 4; END 0: up by STEP with no end, as perf_analyzer's 1:0) until one does not hold")
	f.BoolVar(&s.search, "binary-search", false, "bisect the range for the highest rate or concurrency that holds, to within STEP")
	f.BoolVar(&s.whole, "whole-range", false, "run every step of the range, past one that does not hold")
	f.Float64Var(&s.minAttainment, "min-attainment", 0.99, "share of a step's requests every model must answer within its SLO for the step to hold; given to a single run, it exits 1 when a model falls short")
}

// check refuses flags a sweep cannot run with (and a sweep's flags
// without a range) and makes a concurrency sweep a closed loop.
func (s *sweepFlags) check(cmd *cobra.Command, sweeping bool, rate float64, arrivalSpec *string) error {
	fl := cmd.Flags()
	if !(s.minAttainment > 0 && s.minAttainment <= 1) && !(s.minAttainment == 0 && s.meanBound > 0) {
		return fmt.Errorf("load: --min-attainment %v is not a share in (0, 1]; 0.99 asks for 99%% of the requests within the SLO", s.minAttainment)
	}
	if !sweeping {
		for _, name := range []string{"binary-search", "whole-range"} {
			if fl.Changed(name) {
				return fmt.Errorf("load: --%s is for a sweep: give --rate-range or --concurrency-range", name)
			}
		}
		return nil
	}
	switch {
	case s.search && s.whole:
		return errors.New("load: give --binary-search (bisect the range) or --whole-range (run every step), not both")
	case s.rateRange != "" && s.concurrencyRange != "":
		return errors.New("load: give --rate-range (open loop) or --concurrency-range (closed loop), not both")
	case s.rateRange != "" && rate != 0:
		return errors.New("load: --rate-range gives the rates; give no --rate")
	case s.rateRange != "" && *arrivalSpec == arrivalClosed:
		return errors.New("load: a closed loop has no rate to sweep: give --concurrency-range")
	case s.concurrencyRange != "" && fl.Changed("concurrency"):
		return errors.New("load: --concurrency-range gives the concurrencies; give no --concurrency")
	case s.concurrencyRange != "" && fl.Changed("arrival") && *arrivalSpec != arrivalClosed:
		return fmt.Errorf("load: --concurrency-range runs a closed loop, not --arrival %s: give --rate-range for an arrival process", *arrivalSpec)
	case s.concurrencyRange != "" && rate != 0:
		return errors.New("load: a closed loop's rate is what the server answers: give no --rate with --concurrency-range")
	}
	if s.rateRange != "" {
		if spec, err := arrival.Parse(*arrivalSpec); err == nil && spec.Kind == arrival.KindTrace && spec.Scale > 0 {
			if spec.Intervals {
				return fmt.Errorf("load: --arrival %s sends at the file's own gaps: it has no rate to sweep; give poisson, constant, gamma or trace:FILE arrivals, sent at each step's rate", *arrivalSpec)
			}
			return fmt.Errorf("load: --arrival %s replays the trace at a scale of its own rate; to sweep rates give trace:%s, replayed at each step's rate", *arrivalSpec, spec.Path)
		}
	}
	if s.concurrencyRange != "" {
		*arrivalSpec = arrivalClosed
	}
	return nil
}

// loadRun is what a sweep's steps share with a single load.
type loadRun struct {
	models      []string
	grpc        string
	arrival     string
	closed      bool
	concurrency int
	configs     func(shares []loadgen.Share, concurrency int) ([]loadgen.Config, error)
	json        bool
	csv         runTable // nil: no --csv
	csvPath     string   // csv's file, for its errors
	metrics     *metricsFlags
	warmup      time.Duration // each step's
	// experiments gathers each step's requests for --profile-export-file;
	// nil without it.
	experiments *[]exportExperiment
}

// run sweeps the range and reports each step as it ends, then what held.
func (s *sweepFlags) run(cmd *cobra.Command, d *daemonAPI, lr loadRun) error {
	spec, integer := s.rateRange, false
	if lr.closed {
		spec, integer = s.concurrencyRange, true
	}
	r, err := loadgen.ParseRange(spec, integer)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	// view is what the server said of the last step: its statistics, read
	// around it when the CSV file wants them, and its metrics when asked.
	var view serverView
	step := func(ctx context.Context, at float64) (*loadgen.MixReport, error) {
		var (
			shares []loadgen.Share
			err    error
		)
		concurrency := lr.concurrency
		if lr.closed {
			shares, err = closedShares(lr.models, 0)
			concurrency = int(at)
		} else {
			shares, err = loadShares(lr.models, at, lr.arrival)
		}
		if err != nil {
			return nil, err
		}
		cfgs, err := lr.configs(shares, concurrency)
		if err != nil {
			return nil, err
		}
		statistics := lr.csv != nil && lr.csv.ServerSides()
		names := shareModels(shares)
		var before map[string]kserve.ModelStatistics
		var bounds *boundaryStats // one model's: the statistics at the step's windows' bounds
		if statistics {
			before = serverStatsOf(ctx, d, lr.grpc, names)
			if len(cfgs) == 1 {
				bounds = newBoundaryStats(ctx, d, lr.grpc, names)
				defer bounds.wait()
				cfgs[0].OnBoundary = bounds.at
			}
		}
		collector := lr.metrics.start(ctx, d, lr.warmup)
		mix, err := loadgen.RunMix(ctx, cfgs)
		view = serverView{metrics: lr.metrics.stop(collector, cmd.ErrOrStderr())}
		if statistics && mix != nil {
			if bounds != nil {
				view.sides = bounds.sides(mix.Models[0])
			}
			if view.sides == nil {
				view.sides = serverSides(before, serverStatsOf(context.WithoutCancel(ctx), d, lr.grpc, names))
			}
		}
		return mix, err
	}
	w := cmd.OutOrStdout()
	var (
		rows    *sweepTable
		csvErr  error
		metrics []stepMetrics // each step's, for --json
	)
	each := func(st loadgen.SweepStep) {
		if lr.csv != nil && csvErr == nil {
			csvErr = lr.csv.Step(st, view)
		}
		if lr.experiments != nil && len(st.Run.Models) == 1 {
			*lr.experiments = append(*lr.experiments, experimentOf(st.Run.Models[0]))
		}
		if view.metrics != nil {
			metrics = append(metrics, stepMetrics{At: st.At, MetricsSummary: view.metrics})
		}
		if lr.json {
			return
		}
		if rows == nil {
			rows = newSweepTable(w, lr, s.rule(), st.Run)
		}
		rows.row(st)
		writeServerMetrics(w, view.metrics, strings.Repeat(" ", 13))
	}
	mode := loadgen.SweepUntilMiss
	switch {
	case s.search:
		mode = loadgen.SweepSearch
	case s.whole:
		mode = loadgen.SweepWhole
	}
	res, err := loadgen.Sweep(cmd.Context(), r, mode, s.rule(), step, each)
	if csvErr != nil {
		return fmt.Errorf("load: %s: %w", lr.csvPath, csvErr)
	}
	if err != nil {
		return d.failOver(lr.grpc, err)
	}
	if lr.json {
		kind := "rate"
		if lr.closed {
			kind = "concurrency"
		}
		out := map[string]any{"arrival": lr.arrival, "sweep": kind, "range": r, "result": res}
		if len(metrics) > 0 {
			out["server_metrics"] = metrics
		}
		if err := printJSON(w, out); err != nil {
			return err
		}
	} else if rows != nil {
		writeSweepSummary(w, res, lr.closed)
	}
	if res.Interrupted {
		return &exitError{code: 1, msg: "gpuletd load: interrupted; the steps above ran"}
	}
	return nil
}

// stepMetrics is what the server's metrics said of one step of a sweep
// (--collect-metrics), at its rate or concurrency.
type stepMetrics struct {
	At float64 `json:"at"`
	*loadgen.MetricsSummary
}

// sweepTable prints a sweep's steps as they end, in fixed columns (a step
// takes seconds; a table aligned at the end would show nothing until then).
type sweepTable struct {
	w      io.Writer
	closed bool
	mix    bool
}

func newSweepTable(w io.Writer, lr loadRun, rule loadgen.StepRule, first *loadgen.MixReport) *sweepTable {
	t := &sweepTable{w: w, closed: lr.closed, mix: len(first.Models) > 1}
	r0 := first.Models[0]
	tensors, target := loadTarget(r0)
	what := r0.Model
	if t.mix {
		names := make([]string, len(first.Models))
		for i, r := range first.Models {
			names[i] = r.Model
		}
		what = strings.Join(names, ", ")
	}
	how := lr.arrival + " arrivals at each total rate"
	if lr.closed {
		how = "a closed loop at each concurrency"
		if t.mix {
			how += " (per model)"
		}
	}
	span := "for " + r0.Window.Round(time.Millisecond).String() // a step of -p 200 lasts 200ms
	if r0.Windows != nil {
		span = "in " + windowsEach(r0) + " windows"
		if r0.Windows.Requests > 0 {
			span = "in windows of " + windowsEach(r0)
		}
		span += fmt.Sprintf(" until 3 agree within %g%%", 100*r0.Windows.Stability)
	}
	fmt.Fprintf(w, "sweep of %s at %s: %s %s, %s tensors\n", what, target, how, span, tensors)
	fmt.Fprintf(w, "a step holds when %s\n\n", ruleWords(rule))
	first6 := "P50"
	if t.mix {
		first6 = "LOWEST"
	}
	at := "RATE"
	if t.closed {
		at = "CONCURRENCY"
	}
	t.line(at, "SENT", "IN SLO", "GOODPUT", first6, "P99", "HOLDS", "FAILED")
	return t
}

// line writes one row of fixed columns; the last takes what it needs.
func (t *sweepTable) line(at, sent, inSLO, goodput, p50, p99, holds, failed string) {
	if t.mix {
		fmt.Fprintf(t.w, "%-12s %7s %7s %9s  %-20s %-5s %s\n", at, sent, inSLO, goodput, p50, holds, failed)
		return
	}
	fmt.Fprintf(t.w, "%-12s %7s %7s %9s %8s %8s  %-5s %s\n", at, sent, inSLO, goodput, p50, p99, holds, failed)
}

func (t *sweepTable) row(st loadgen.SweepStep) {
	tot := st.Run.Total
	inSLO := 0.0
	if tot.Scheduled > 0 {
		inSLO = float64(tot.WithinSLO) / float64(tot.Scheduled)
	}
	at := perSecond(st.At)
	if t.closed {
		at = fmt.Sprintf("%.0f (%s)", st.At, perSecond(tot.SendRate))
	}
	holds := "no"
	if st.Holds {
		holds = "yes"
	}
	failed := failures(tot.Failed)
	if tot.Dropped > 0 {
		failed = strings.TrimPrefix(strings.TrimPrefix(failed, "none"), ", ")
		if failed != "" {
			failed += ", "
		}
		failed += fmt.Sprintf("%d dropped by this client", tot.Dropped)
	}
	if r := st.Run.Models[0]; r.Stable != nil && !*r.Stable {
		failed = strings.TrimPrefix(strings.TrimPrefix(failed, "none"), "; ")
		if failed != "" {
			failed += "; "
		}
		failed += fmt.Sprintf("unstable: no 3 windows of %d agreed", len(r.Trials))
	}
	sent := fmt.Sprint(tot.Sent)
	if t.mix {
		lowest := "-"
		if st.Lowest != "" {
			lowest = st.Lowest + " " + percent(st.Attainment)
		}
		t.line(at, sent, percent(inSLO), perSecond(tot.Goodput), lowest, "", holds, failed)
		return
	}
	p50, p99 := "-", "-"
	if l := st.Run.Models[0].Latency; l.Count > 0 {
		p50, p99 = dur(l.P50), dur(l.P99)
	}
	t.line(at, sent, percent(inSLO), perSecond(tot.Goodput), p50, p99, holds, failed)
}

// writeSweepSummary says what the sweep found: the highest step that held
// and the lowest that did not.
func writeSweepSummary(w io.Writer, res *loadgen.SweepResult, closed bool) {
	name := func(st *loadgen.SweepStep) string {
		if closed {
			return fmt.Sprintf("concurrency %.0f", st.At)
		}
		return perSecond(st.At)
	}
	rule := loadgen.StepRule{MinAttainment: res.MinAttainment, MaxMeanLatency: time.Duration(res.MaxMeanLatencyMS * float64(time.Millisecond))}
	missed := func(st *loadgen.SweepStep) string { return missedRule(st, rule) }
	fmt.Fprintln(w)
	switch h, f := res.Held, res.Failed; {
	case h != nil && f != nil:
		fmt.Fprintf(w, "highest that held: %s, goodput %s; %s did not (%s)\n", name(h), perSecond(h.Run.Total.Goodput), name(f), missed(f))
	case h != nil && !res.Interrupted:
		fmt.Fprintf(w, "every step held, up to %s (goodput %s): the limit is above the range\n", name(h), perSecond(h.Run.Total.Goodput))
	case h != nil:
		fmt.Fprintf(w, "highest that held before the interruption: %s, goodput %s\n", name(h), perSecond(h.Run.Total.Goodput))
	case f != nil:
		fmt.Fprintf(w, "no step held: at %s, the lowest, %s\n", name(f), missed(f))
	}
	if res.Skipped > 0 {
		fmt.Fprintf(w, "%d more steps above it not run: a sweep stops at the first step that does not hold (--binary-search looks between)\n", res.Skipped)
	}
}
