package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/kserve"
	"github.com/gpulet/gpuletd/sim/loadgen"
)

// stat is a model's statistics with the counts and times given by name.
func stat(inferences, executions int64, stats map[string]kserve.StatDuration) kserve.ModelStatistics {
	return kserve.ModelStatistics{InferenceCount: inferences, ExecutionCount: executions, InferenceStats: stats}
}

// What the server's statistics say of a run, as perf_analyzer's
// server-side lines: the difference from before to after.
func TestServerSideOfARun(t *testing.T) {
	d := func(count, ns int64) kserve.StatDuration { return kserve.StatDuration{Count: count, NS: ns} }
	before := map[string]kserve.ModelStatistics{
		"a": stat(10, 5, map[string]kserve.StatDuration{"success": d(10, 0), "queue": d(10, 1e6), "compute_infer": d(10, 2e6)}),
		"b": stat(7, 7, map[string]kserve.StatDuration{"success": d(7, 0)}),
		"c": stat(0, 0, nil),
	}
	after := map[string]kserve.ModelStatistics{
		"a": stat(410, 105, map[string]kserve.StatDuration{"success": d(310, 0), "queue": d(210, 201e6), "compute_input": d(200, 4e6),
			"compute_infer": d(210, 402e6), "compute_output": d(200, 2e6), "cache_hit": d(100, 1e6)}),
		"b": stat(7, 7, map[string]kserve.StatDuration{"success": d(7, 0)}),
		"d": stat(3, 3, map[string]kserve.StatDuration{"success": d(3, 0)}),
	}
	sides := serverSides(before, after)
	require.Equal(t, map[string]serverSide{"a": {Answers: 300, Inferences: 400, Batches: 100, CacheHits: 100,
		QueueNS: 1e6, InputNS: 20_000, InferNS: 2e6, OutputNS: 10_000}}, sides, "b answered nothing, c was not read after, d not before")
	require.Equal(t, map[string]int64{"a": 100}, cacheHitsIn(sides))

	var b strings.Builder
	writeServerSides(&b, sides, []*loadgen.Report{{Model: "a", OK: 120}, {Model: "b", OK: 50}}, 1)
	require.Equal(t, "a on the server: 300 answers, 400 inferences in 100 batches; a request ran 1.00ms queued, then 20µs readying its batch's inputs, "+
		"2.00ms in the model, 10µs on its outputs\n"+
		"a: the daemon's response cache answered 100 of its requests during the run (120 answered here; "+
		"the same request went every time; --inputs N sends N distinct ones)\n", b.String())
	b.Reset()
	writeServerSides(&b, sides, []*loadgen.Report{{Model: "a", OK: 120}}, 50)
	require.Contains(t, b.String(), "(120 answered here; 50 distinct requests went in turn)\n")
}

// TestBoundaryStatsSpanTheReportedWindows: the server-side lines of a run
// measured in windows are the difference between the statistics at the
// start of the first window reported and at the end of the last; of a run
// of one window, between its start after the warm-up and its end; a read
// missing leaves the caller to the whole run's.
func TestBoundaryStatsSpanTheReportedWindows(t *testing.T) {
	answered := func(n int64) map[string]kserve.ModelStatistics {
		return map[string]kserve.ModelStatistics{"a": stat(n, n, map[string]kserve.StatDuration{"success": {Count: n}})}
	}
	b := &boundaryStats{snaps: map[int]map[string]kserve.ModelStatistics{0: answered(100), 1: answered(150), 2: answered(220), 3: answered(300), 4: answered(390), 5: answered(500)}}
	yes := true
	five := &loadgen.Report{Windows: &loadgen.Windows{}, Trials: make([]loadgen.Trial, 5), Stable: &yes}
	require.Equal(t, int64(500-220), b.sides(five)["a"].Answers, "windows 2 to 4: from the start of 2 to the start of 5")
	require.Equal(t, int64(50), b.sides(&loadgen.Report{})["a"].Answers, "one window: from 0 to 1")
	two := &loadgen.Report{Windows: &loadgen.Windows{}, Trials: make([]loadgen.Trial, 2), Stable: new(bool)}
	require.Equal(t, int64(120), b.sides(two)["a"].Answers, "cut short at two windows: both")
	seven := &loadgen.Report{Windows: &loadgen.Windows{}, Trials: make([]loadgen.Trial, 7), Stable: new(bool)}
	require.Nil(t, b.sides(seven), "the end's read is missing")
	var none *boundaryStats
	none.wait() // nil waits for none
}
