package loadgen

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		integer bool
		want    []float64
		err     string
	}{
		{spec: "100:500:100", want: []float64{100, 200, 300, 400, 500}},
		{spec: "100:500", want: []float64{100, 200, 300, 400, 500}},
		{spec: "100:450:100", want: []float64{100, 200, 300, 400}},
		{spec: "0.3:0.9:0.3", want: []float64{0.3, 0.6, 0.9}},
		{spec: "50:50", want: []float64{50}},
		{spec: "1:4", integer: true, want: []float64{1, 2, 3, 4}},
		{spec: "2:16:4", integer: true, want: []float64{2, 6, 10, 14}},
		{spec: "100", want: []float64{100}},
		{spec: "4", integer: true, want: []float64{4}},
		{spec: "1:2:3:4", err: "give START, START:END or START:END:STEP"},
		{spec: "", err: `"" is not a positive number`},
		{spec: "0:100", err: `"0" is not a positive number`},
		{spec: "a:100", err: `"a" is not a positive number`},
		{spec: "10:100:-5", err: `"-5" is not a positive number`},
		{spec: "500:100", err: "ends below its start"},
		{spec: "1.5:4", integer: true, err: `"1.5" is not a whole number`},
		{spec: "1:100000", integer: true, err: "at most 65536 requests in flight"},
		{spec: "1000:2e6", err: "at most 1000000 requests/s"},
		{spec: "5:0:0", err: `"0" is not a positive number`},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			r, err := ParseRange(tc.spec, tc.integer)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrConfig)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.InDeltaSlice(t, tc.want, r.Points(), 1e-9)
		})
	}
}

// capacityServer answers every request within its SLO up to capacity and half
// of them above it, and remembers the values it was run at.
type capacityServer struct {
	capacity float64
	ran      []float64
	models   []string
}

func (f *capacityServer) run(_ context.Context, at float64) (*MixReport, error) {
	f.ran = append(f.ran, at)
	mix := &MixReport{}
	for i, m := range f.models {
		due := int64(1000)
		within := due
		if at > f.capacity && i == len(f.models)-1 {
			within = due / 2 // the last model is the one that suffers
		}
		mix.Models = append(mix.Models, &Report{Model: m, Scheduled: due, Sent: due, WithinSLO: within})
	}
	mix.Total = sum(mix.Models)
	return mix, nil
}

func TestSweep(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     string
		integer  bool
		mode     SweepMode
		capacity float64
		ran      []float64
		held     float64 // 0: none
		failed   float64 // 0: none
		skipped  int
	}{
		{name: "linear, stops at the first step that fails", spec: "100:500:100", capacity: 250,
			ran: []float64{100, 200, 300}, held: 200, failed: 300, skipped: 2},
		{name: "linear, all hold", spec: "100:500:100", capacity: 1000,
			ran: []float64{100, 200, 300, 400, 500}, held: 500},
		{name: "linear, none holds", spec: "100:500:100", capacity: 50,
			ran: []float64{100}, failed: 100, skipped: 4},
		{name: "the whole range, past the first step that fails", spec: "100:500:100", mode: SweepWhole, capacity: 250,
			ran: []float64{100, 200, 300, 400, 500}, held: 200, failed: 300},
		{name: "search bisects to the step", spec: "100:500:25", mode: SweepSearch, capacity: 330,
			ran: []float64{100, 500, 300, 400, 350, 325}, held: 325, failed: 350},
		{name: "search, the whole range holds", spec: "100:500:25", mode: SweepSearch, capacity: 900,
			ran: []float64{100, 500}, held: 500},
		{name: "search, none holds", spec: "100:500:25", mode: SweepSearch, capacity: 10,
			ran: []float64{100}, failed: 100},
		{name: "search on whole numbers", spec: "1:16", integer: true, mode: SweepSearch, capacity: 6,
			ran: []float64{1, 16, 8, 4, 6, 7}, held: 6, failed: 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRange(tc.spec, tc.integer)
			require.NoError(t, err)
			srv := &capacityServer{capacity: tc.capacity, models: []string{"a", "b"}}
			var seen []float64
			res, err := Sweep(t.Context(), r, tc.mode, StepRule{MinAttainment: 0.99}, srv.run, func(s SweepStep) { seen = append(seen, s.At) })
			require.NoError(t, err)
			require.Equal(t, tc.ran, srv.ran)
			require.Equal(t, tc.ran, seen, "each step is seen as it ends")
			require.Len(t, res.Steps, len(tc.ran))
			if tc.held == 0 {
				require.Nil(t, res.Held)
			} else {
				require.NotNil(t, res.Held)
				require.Equal(t, tc.held, res.Held.At)
				require.True(t, res.Held.Holds)
			}
			if tc.failed == 0 {
				require.Nil(t, res.Failed)
			} else {
				require.NotNil(t, res.Failed)
				require.Equal(t, tc.failed, res.Failed.At)
				require.Equal(t, "b", res.Failed.Lowest, "the model that missed is named")
				require.InDelta(t, 0.5, res.Failed.Attainment, 1e-9)
			}
			require.Equal(t, tc.skipped, res.Skipped)
			require.False(t, res.Interrupted)
			require.Equal(t, tc.mode == SweepSearch, res.Search)
			require.Equal(t, tc.mode == SweepWhole, res.Whole)
		})
	}
}

func TestSweepCountsClientDropsAsMisses(t *testing.T) {
	mix := &MixReport{Models: []*Report{{Model: "a", Scheduled: 1000, Sent: 980, Dropped: 20, WithinSLO: 980}}}
	s := Judge(100, mix, StepRule{MinAttainment: 0.99})
	require.False(t, s.Holds, "20 of 1000 due were never sent: 98%%")
	require.InDelta(t, 0.98, s.Attainment, 1e-9)

	s = Judge(100, &MixReport{Models: []*Report{{Model: "idle"}}}, StepRule{MinAttainment: 0.99})
	require.False(t, s.Holds, "a step where nothing was due shows nothing")
	require.Empty(t, s.Lowest)
}

func TestSweepStops(t *testing.T) {
	r, err := ParseRange("100:500:100", false)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	srv := &capacityServer{capacity: 1000, models: []string{"a"}}
	res, err := Sweep(ctx, r, SweepUntilMiss, StepRule{MinAttainment: 0.99}, func(ctx context.Context, at float64) (*MixReport, error) {
		mix, _ := srv.run(ctx, at)
		if at == 200 {
			cancel() // as ^C during the second step
			return mix, context.Canceled
		}
		return mix, nil
	}, nil)
	require.NoError(t, err)
	require.True(t, res.Interrupted)
	require.Equal(t, []float64{100, 200}, srv.ran)
	require.Equal(t, 100.0, res.Held.At, "the interrupted step counts neither way")
	require.Nil(t, res.Failed)

	long, err := ParseRange("1:1000:1", false)
	require.NoError(t, err, "a search may take any range")
	srv = &capacityServer{capacity: 500, models: []string{"a"}}
	_, err = Sweep(t.Context(), long, SweepWhole, StepRule{MinAttainment: 0.99}, srv.run, nil)
	require.ErrorIs(t, err, ErrConfig)
	require.ErrorContains(t, err, "the range from 1 to 1000 has 1000 steps, more than 100: give a larger STEP, or search it (--binary-search)")
	require.Empty(t, srv.ran, "refused before any step ran")
	res, err = Sweep(t.Context(), long, SweepSearch, StepRule{MinAttainment: 0.99}, srv.run, nil)
	require.NoError(t, err)
	require.InDelta(t, 500, res.Held.At, 1, "to within STEP of the capacity")
	require.InDelta(t, 1, res.Failed.At-res.Held.At, 1)
	require.Len(t, res.Steps, 12, "1, 1000, then ten halvings of the gap")

	boom := errors.New("model x is not served")
	res, err = Sweep(t.Context(), r, SweepSearch, StepRule{MinAttainment: 0.99}, func(context.Context, float64) (*MixReport, error) { return nil, boom }, nil)
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "sweep at 100: model x is not served")
	require.Empty(t, res.Steps)
}

// TestJudgeByMeanLatency: under perf_analyzer's bound on the mean latency a
// step holds while every model's mean stays within it, a model with
// requests due and none answered failing it; with an attainment floor too,
// both must hold.
func TestJudgeByMeanLatency(t *testing.T) {
	ms := time.Millisecond
	report := func(name string, mean time.Duration, answered int64) *Report {
		return &Report{Model: name, Scheduled: 100, Sent: 100, OK: answered, WithinSLO: answered, Latency: Percentiles{Count: answered, Mean: mean}}
	}
	for _, tc := range []struct {
		name    string
		models  []*Report
		rule    StepRule
		holds   bool
		slowest string
		meanUS  float64
	}{
		{name: "within", models: []*Report{report("a", 4*ms, 100)}, rule: StepRule{MaxMeanLatency: 5 * ms}, holds: true, slowest: "a", meanUS: 4000},
		{name: "over", models: []*Report{report("a", 6*ms, 100)}, rule: StepRule{MaxMeanLatency: 5 * ms}, slowest: "a", meanUS: 6000},
		{name: "the slowest of two", models: []*Report{report("a", 2*ms, 100), report("b", 7*ms, 100)}, rule: StepRule{MaxMeanLatency: 5 * ms}, slowest: "b", meanUS: 7000},
		{name: "none answered", models: []*Report{report("a", 2*ms, 100), report("b", 0, 0)}, rule: StepRule{MaxMeanLatency: 5 * ms}, slowest: "a", meanUS: 2000},
		{name: "the mean holds, the share not", models: []*Report{report("a", 2*ms, 50)}, rule: StepRule{MinAttainment: 0.99, MaxMeanLatency: 5 * ms}, slowest: "a", meanUS: 2000},
		{name: "both hold", models: []*Report{report("a", 2*ms, 100)}, rule: StepRule{MinAttainment: 0.99, MaxMeanLatency: 5 * ms}, holds: true, slowest: "a", meanUS: 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Judge(1, &MixReport{Models: tc.models}, tc.rule)
			require.Equal(t, tc.holds, s.Holds)
			require.Equal(t, tc.slowest, s.Slowest)
			require.InDelta(t, tc.meanUS, s.MeanLatencyUS, 1e-9)
		})
	}
}

// TestOpenRange: perf_analyzer's END of 0 goes up by STEP until a step does
// not hold, at most MaxSweepSteps steps and the most a run takes; it has no
// end to bisect up to, nor a whole range to run.
func TestOpenRange(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		integer bool
		first   []float64
		n       int
	}{
		{spec: "1:0", integer: true, first: []float64{1, 2, 3}, n: MaxSweepSteps},
		{spec: "4:0:4", integer: true, first: []float64{4, 8, 12}, n: MaxSweepSteps},
		{spec: "100:0", first: []float64{100, 200, 300}, n: MaxSweepSteps},
		{spec: "250000:0:250000", first: []float64{250000, 500000, 750000}, n: 4},
	} {
		r, err := ParseRange(tc.spec, tc.integer)
		require.NoError(t, err, tc.spec)
		require.True(t, r.Open)
		require.Len(t, r.Points(), tc.n, tc.spec)
		require.InDeltaSlice(t, tc.first, r.Points()[:3], 1e-9, tc.spec)
	}
	r, err := ParseRange("100:0:100", false)
	require.NoError(t, err)
	srv := &capacityServer{capacity: 450, models: []string{"a"}}
	res, err := Sweep(t.Context(), r, SweepUntilMiss, StepRule{MinAttainment: 0.99}, srv.run, nil)
	require.NoError(t, err)
	require.Equal(t, []float64{100, 200, 300, 400, 500}, srv.ran, "up until 500 does not hold")
	require.Equal(t, 400.0, res.Held.At)
	require.Zero(t, res.Skipped, "an open range has no steps above it to skip")
	for _, mode := range []SweepMode{SweepSearch, SweepWhole} {
		_, err := Sweep(t.Context(), r, mode, StepRule{MinAttainment: 0.99}, srv.run, nil)
		require.ErrorIs(t, err, ErrConfig)
		require.ErrorContains(t, err, "an open range (END 0)")
	}
}
