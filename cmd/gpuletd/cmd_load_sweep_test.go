package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/stretchr/testify/require"
)

func TestWriteSweepSummary(t *testing.T) {
	step := func(at float64, holds bool, att float64, models ...string) loadgen.SweepStep {
		mix := &loadgen.MixReport{Total: loadgen.Total{Goodput: at * att}}
		for _, m := range models {
			mix.Models = append(mix.Models, &loadgen.Report{Model: m})
		}
		return loadgen.SweepStep{At: at, Holds: holds, Attainment: att, Lowest: models[len(models)-1], Run: mix}
	}
	for _, tc := range []struct {
		name   string
		res    loadgen.SweepResult
		closed bool
		want   string
	}{
		{name: "held, then not", res: loadgen.SweepResult{Held: ptr(step(300, true, 1, "a")), Failed: ptr(step(400, false, 0.9612, "a")), Skipped: 2},
			want: "\nhighest that held: 300/s, goodput 300/s; 400/s did not (96.1% within the SLO)\n" +
				"2 more steps above it not run: a sweep stops at the first step that does not hold (--binary-search looks between)\n"},
		{name: "a mix names the model that missed", res: loadgen.SweepResult{Held: ptr(step(300, true, 1, "a", "b")), Failed: ptr(step(325, false, 0.5, "a", "b"))},
			want: "\nhighest that held: 300/s, goodput 300/s; 325/s did not (b answered 50.0% within its SLO)\n"},
		{name: "a closed loop", closed: true, res: loadgen.SweepResult{Held: ptr(step(6, true, 1, "a")), Failed: ptr(step(7, false, 0.98, "a"))},
			want: "\nhighest that held: concurrency 6, goodput 6.00/s; concurrency 7 did not (98.0% within the SLO)\n"},
		{name: "all held", res: loadgen.SweepResult{Held: ptr(step(500, true, 1, "a"))},
			want: "\nevery step held, up to 500/s (goodput 500/s): the limit is above the range\n"},
		{name: "interrupted", res: loadgen.SweepResult{Held: ptr(step(500, true, 1, "a")), Interrupted: true},
			want: "\nhighest that held before the interruption: 500/s, goodput 500/s\n"},
		{name: "none held", res: loadgen.SweepResult{Failed: ptr(step(100, false, 0.2, "a"))},
			want: "\nno step held: at 100/s, the lowest, 20.0% within the SLO\n"},
		{name: "over perf_analyzer's bound on the mean", closed: true, res: loadgen.SweepResult{MaxMeanLatencyMS: 5, Held: ptr(step(3, true, 1, "a")),
			Failed: ptr(slowest(step(4, false, 1, "a"), "a", 6200))},
			want: "\nhighest that held: concurrency 3, goodput 3.00/s; concurrency 4 did not (a's mean latency 6.20ms, over 5.00ms)\n"},
		{name: "nothing answered under the bound", res: loadgen.SweepResult{MaxMeanLatencyMS: 5, Failed: ptr(step(100, false, 0, "a"))},
			want: "\nno step held: at 100/s, the lowest, no request was answered\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			writeSweepSummary(&buf, &tc.res, tc.closed)
			require.Equal(t, tc.want, buf.String())
		})
	}
}

func TestSweepRows(t *testing.T) {
	rep := &loadgen.Report{Model: "lenet5", URL: "http://127.0.0.1:8700", Binary: true, Scheduled: 1000, Sent: 990, Dropped: 10, WithinSLO: 985,
		Latency: loadgen.Percentiles{Count: 985, P50: 450_000, P99: 2_100_000}}
	mix := &loadgen.MixReport{Models: []*loadgen.Report{rep}, Total: loadgen.Total{Scheduled: 1000, Sent: 990, Dropped: 10, WithinSLO: 985, Goodput: 985,
		SendRate: 990, Failed: map[string]int64{"503 deadline": 5}}}
	var buf bytes.Buffer
	tab := newSweepTable(&buf, loadRun{arrival: "poisson"}, loadgen.StepRule{MinAttainment: 0.99}, mix)
	tab.row(loadgen.SweepStep{At: 1000, Holds: false, Attainment: 0.985, Lowest: "lenet5", Run: mix})
	tab = newSweepTable(&buf, loadRun{arrival: "closed", closed: true}, loadgen.StepRule{MinAttainment: 0.99}, mix)
	tab.row(loadgen.SweepStep{At: 4, Holds: true, Attainment: 0.985, Lowest: "lenet5", Run: mix})
	require.Equal(t, `sweep of lenet5 at http://127.0.0.1:8700: poisson arrivals at each total rate for 0s, binary tensors
a step holds when every model answers 99.0% of its requests due within its SLO

RATE            SENT  IN SLO   GOODPUT      P50      P99  HOLDS FAILED
1000/s           990   98.5%     985/s    450µs   2.10ms  no    5 503 deadline, 10 dropped by this client
sweep of lenet5 at http://127.0.0.1:8700: a closed loop at each concurrency for 0s, binary tensors
a step holds when every model answers 99.0% of its requests due within its SLO

CONCURRENCY     SENT  IN SLO   GOODPUT      P50      P99  HOLDS FAILED
4 (990/s)        990   98.5%     985/s    450µs   2.10ms  yes   5 503 deadline, 10 dropped by this client
`, buf.String())

	// Steps measured in windows: the header says how, and a step whose
	// windows did not agree says so.
	buf.Reset()
	rep.Windows, rep.Trials, rep.Stable = &loadgen.Windows{Stability: 0.1, MaxTrials: 5}, []loadgen.Trial{{Duration: 200 * time.Millisecond}}, ptr(false)
	mix.Total.Failed, mix.Total.Dropped = nil, 0
	tab = newSweepTable(&buf, loadRun{arrival: "closed", closed: true}, loadgen.StepRule{MinAttainment: 0.99}, mix)
	tab.row(loadgen.SweepStep{At: 4, Holds: true, Run: mix})
	rep.Windows.Requests = 50
	newSweepTable(&buf, loadRun{arrival: "closed", closed: true}, loadgen.StepRule{MinAttainment: 0.99}, mix)
	require.Equal(t, `sweep of lenet5 at http://127.0.0.1:8700: a closed loop at each concurrency in 200ms windows until 3 agree within 10%, binary tensors
a step holds when every model answers 99.0% of its requests due within its SLO

CONCURRENCY     SENT  IN SLO   GOODPUT      P50      P99  HOLDS FAILED
4 (990/s)        990   98.5%     985/s    450µs   2.10ms  yes   unstable: no 3 windows of 1 agreed
sweep of lenet5 at http://127.0.0.1:8700: a closed loop at each concurrency in windows of 50 requests and 1s at least until 3 agree within 10%, binary tensors
a step holds when every model answers 99.0% of its requests due within its SLO

CONCURRENCY     SENT  IN SLO   GOODPUT      P50      P99  HOLDS FAILED
`, buf.String())
}

func ptr[T any](v T) *T { return &v }

// slowest is st with its slowest model and that model's mean latency.
func slowest(st loadgen.SweepStep, model string, meanUS float64) loadgen.SweepStep {
	st.Slowest, st.MeanLatencyUS = model, meanUS
	return st
}

// TestStepRuleWords: the sweep's header and a judged run's failure say the
// rule as it was given.
func TestStepRuleWords(t *testing.T) {
	ms := time.Millisecond
	require.Equal(t, "every model answers 99.0% of its requests due within its SLO", ruleWords(loadgen.StepRule{MinAttainment: 0.99}))
	require.Equal(t, "every model's mean latency is within 5.00ms", ruleWords(loadgen.StepRule{MaxMeanLatency: 5 * ms}))
	require.Equal(t, "every model answers 90.0% of its requests due within its SLO and every model's mean latency is within 5.00ms",
		ruleWords(loadgen.StepRule{MinAttainment: 0.9, MaxMeanLatency: 5 * ms}))
	mix := &loadgen.MixReport{Models: []*loadgen.Report{{Model: "a"}}}
	over := loadgen.SweepStep{Lowest: "a", Attainment: 1, Slowest: "a", MeanLatencyUS: 7000, Run: mix}
	require.Equal(t, "gpuletd load: a's mean latency 7.00ms, over 5.00ms (--latency-threshold, perf_analyzer's bound on the mean)",
		shortOfFloor(over, loadgen.StepRule{MaxMeanLatency: 5 * ms}))
	require.Equal(t, "gpuletd load: a answered 80.0% of its requests due within its SLO, under --min-attainment 90.0%",
		shortOfFloor(loadgen.SweepStep{Lowest: "a", Attainment: 0.8, Run: mix}, loadgen.StepRule{MinAttainment: 0.9, MaxMeanLatency: 5 * ms}))
	require.Equal(t, "gpuletd load: no request fell due, so nothing held --latency-threshold 5.00ms",
		shortOfFloor(loadgen.SweepStep{Run: mix}, loadgen.StepRule{MaxMeanLatency: 5 * ms}))
}
