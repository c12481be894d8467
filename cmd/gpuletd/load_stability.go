package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
)

// Measurement modes, as perf_analyzer's --measurement-mode names them.
const (
	timeWindows  = "time_windows"
	countWindows = "count_windows"
)

// windowFlags are perf_analyzer's measurement flags: windows measured one
// after the other until the last three agree (loadgen.Windows), and a
// warm-up of a count of requests.
type windowFlags struct {
	stability      float64 // -s, percent
	maxTrials      int     // -r
	mode           string  // --measurement-mode
	windowRequests int64   // --measurement-request-count
	warmupRequests int64   // --warmup-request-count
}

// windowFlagNames are the flags that make a run measure in windows.
var windowFlagNames = []string{"stability-percentage", "max-trials", "measurement-mode", "measurement-request-count"}

// register adds the flags to cmd.
func (w *windowFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Float64VarP(&w.stability, "stability-percentage", "s", 100*loadgen.DefaultStability, "measure in windows (-p long) until the last three agree within this percentage, their throughputs and latencies (the mean, or --percentile's), and report those three, as perf_analyzer does")
	f.IntVarP(&w.maxTrials, "max-trials", "r", loadgen.DefaultMaxTrials, "the most windows measured: when the last three of them do not agree, the report says so and the command fails, as perf_analyzer's -r")
	f.StringVar(&w.mode, "measurement-mode", timeWindows, "time_windows (each window lasts -p) or count_windows (each lasts until --measurement-request-count requests fell due in it, and a second), as perf_analyzer's; measures in windows")
	f.Int64Var(&w.windowRequests, "measurement-request-count", 50, "the least requests of a count window, as perf_analyzer's; measures in count windows")
	f.Int64Var(&w.warmupRequests, "warmup-request-count", 0, "the warm-up lasts until this many requests fell due in it too (after --warmup), as perf_analyzer's")
	_ = cmd.RegisterFlagCompletionFunc("measurement-mode", cobra.FixedCompletions([]string{timeWindows, countWindows}, cobra.ShellCompDirectiveNoFileComp))
}

// windows is how the run measures: nil for one window of --duration,
// unless a flag of windowFlagNames is given. models is how many models the
// run sends to.
func (w *windowFlags) windows(cmd *cobra.Command, models int) (*loadgen.Windows, error) {
	f := cmd.Flags()
	if f.Changed("warmup-request-count") && w.warmupRequests < 0 {
		return nil, usageErrorf("load: --warmup-request-count %d: give 0 or more", w.warmupRequests)
	}
	var given []string
	for _, name := range windowFlagNames {
		if f.Changed(name) {
			given = append(given, "--"+name)
		}
	}
	if len(given) == 0 {
		return nil, nil
	}
	mode := strings.ToLower(strings.TrimSpace(w.mode))
	switch {
	case !(w.stability > 0):
		return nil, usageErrorf("load: --stability-percentage %g: give a percentage above 0, such as 10", w.stability)
	case w.maxTrials < 3:
		return nil, usageErrorf("load: --max-trials %d: three windows in a row must agree, so give 3 or more", w.maxTrials)
	case w.maxTrials > loadgen.MaxTrials:
		return nil, usageErrorf("load: --max-trials %d: give at most %d", w.maxTrials, loadgen.MaxTrials)
	case mode != timeWindows && mode != countWindows:
		return nil, usageErrorf("load: --measurement-mode %q: give %s or %s", w.mode, timeWindows, countWindows)
	case f.Changed("measurement-request-count") && w.windowRequests < 1:
		return nil, usageErrorf("load: --measurement-request-count %d: give 1 or more", w.windowRequests)
	case f.Changed("measurement-request-count") && f.Changed("measurement-mode") && mode != countWindows:
		return nil, usageErrorf("load: --measurement-request-count is a count window's: give --measurement-mode %s, or leave the mode out", countWindows)
	case models > 1:
		return nil, usageErrorf("load: %s measures one model's windows, as perf_analyzer does, and %d are given", given[0], models)
	case f.Changed("request-count"):
		return nil, usageErrorf("load: --request-count ends the run's one window: give it or %s, not both", given[0])
	}
	win := &loadgen.Windows{Stability: w.stability / 100, MaxTrials: w.maxTrials}
	if mode == countWindows || f.Changed("measurement-request-count") {
		win.Requests = w.windowRequests
	}
	if f.Changed("percentile") {
		p, err := f.GetInt("percentile")
		if err != nil {
			return nil, err
		}
		win.Percentile = float64(p)
	}
	return win, nil
}

// writeWindows says how a run measured in windows: how many, and what the
// last three measured; nothing for a run of one window.
func writeWindows(w io.Writer, r *loadgen.Report) {
	if r.Windows == nil || r.Stable == nil {
		return
	}
	each := windowsEach(r) + " each"
	if r.Windows.Requests > 0 {
		each = "each " + windowsEach(r)
	}
	agreed := "agree"
	if !*r.Stable {
		agreed = "do not agree"
	}
	last := r.Trials[max(0, len(r.Trials)-3):]
	through, lat := make([]string, len(last)), make([]string, len(last))
	for i, t := range last {
		through[i], lat[i] = strings.TrimSuffix(perSecond(t.Throughput), "/s"), dur(t.Latency)
	}
	latency := "mean"
	if p := r.Windows.Percentile; p > 0 {
		latency = fmt.Sprintf("p%g", p)
	}
	fmt.Fprintf(w, "windows\t%d measured (%s); the last %d %s within %g%%: %s req/s, %s %s\n",
		len(r.Trials), each, len(last), agreed, 100*r.Windows.Stability, strings.Join(through, ", "), latency, strings.Join(lat, ", "))
}

// writeTrials prints what each of r's windows measured, in order, as
// perf_analyzer -v prints its passes; nothing for a run of one window.
func writeTrials(w io.Writer, r *loadgen.Report) error {
	if len(r.Trials) == 0 {
		return nil
	}
	latency := "MEAN"
	if p := r.Windows.Percentile; p > 0 {
		latency = fmt.Sprintf("P%g", p)
	}
	tw := newTable(w)
	fmt.Fprintf(tw, "\nWINDOW\tLASTED\tDUE\tOK\tTHROUGHPUT\t%s\n", latency)
	for i, t := range r.Trials {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\n", i+1, t.Duration.Round(time.Millisecond), t.Due, t.OK, perSecond(t.Throughput), dur(t.Latency))
	}
	return tw.Flush()
}

// windowsEach says how long each of r's windows lasts: "5s", or "100
// requests and 1s at least" for count windows.
func windowsEach(r *loadgen.Report) string {
	if n := r.Windows.Requests; n > 0 {
		return fmt.Sprintf("%d requests and 1s at least", n)
	}
	if len(r.Trials) == 0 {
		return "unmeasured"
	}
	return r.Trials[0].Duration.Round(time.Millisecond).String()
}

// unstable is the failure of a run whose windows did not agree, or nil.
func unstable(r *loadgen.Report, window time.Duration) error {
	if r.Stable == nil || *r.Stable {
		return nil
	}
	return &exitError{code: 1, msg: fmt.Sprintf("gpuletd load: no 3 windows in a row agreed within %g%% in %d (the measurement is unstable, as perf_analyzer says it): measure longer windows (-p, now %s), allow more trials (-r) or a wider --stability-percentage",
		100*r.Windows.Stability, len(r.Trials), window)}
}
