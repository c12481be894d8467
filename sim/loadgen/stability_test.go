package loadgen

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/sim/arrival"
	"github.com/stretchr/testify/require"
)

func TestAgree(t *testing.T) {
	ms := time.Millisecond
	trial := func(throughput float64, latency time.Duration) Trial {
		return Trial{OK: 1, Throughput: throughput, Latency: latency}
	}
	for _, tc := range []struct {
		name   string
		trials []Trial
		want   bool
	}{
		{name: "two windows are not enough", trials: []Trial{trial(100, ms), trial(100, ms)}},
		{name: "three alike", trials: []Trial{trial(100, ms), trial(105, ms), trial(109, 1050*time.Microsecond)}, want: true},
		{name: "the last three count", trials: []Trial{trial(10, 9*ms), trial(100, ms), trial(105, ms), trial(109, ms)}, want: true},
		{name: "throughput apart", trials: []Trial{trial(100, ms), trial(105, ms), trial(111, ms)}},
		{name: "latency apart", trials: []Trial{trial(100, ms), trial(100, 1200*time.Microsecond), trial(100, ms)}},
		{name: "a window without an answer", trials: []Trial{trial(100, ms), {}, trial(100, ms)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, agree(tc.trials, 0.1))
		})
	}
}

func TestWindowsDefaultsAndErrors(t *testing.T) {
	w, err := Windows{}.withDefaults()
	require.NoError(t, err)
	require.Equal(t, Windows{Stability: DefaultStability, MaxTrials: DefaultMaxTrials}, w)
	for _, tc := range []struct {
		w    Windows
		want string
	}{
		{Windows{Requests: -1}, "a window of -1 requests"},
		{Windows{Stability: -0.1}, "stability -0.1"},
		{Windows{MaxTrials: 2}, "2 trials: 3 windows in a row must agree"},
		{Windows{MaxTrials: MaxTrials + 1}, "10001 trials; give at most 10000"},
		{Windows{Percentile: 101}, "percentile 101"},
	} {
		_, err := tc.w.withDefaults()
		require.ErrorIs(t, err, ErrConfig)
		require.ErrorContains(t, err, tc.want)
	}
	_, err = Config{URL: "http://x", Model: "m", Rate: 1, Duration: time.Second, Requests: 5, Windows: &Windows{}}.withDefaults()
	require.ErrorContains(t, err, "measure in windows or to a count, not both")
}

// placed runs requests due at the offsets ats (from begin) through
// segments s and says where each fell: -1 the warm-up, else its window;
// the schedule ends at the first offset over says is past its end.
func placed(s *segments, ats ...time.Duration) []int {
	var out []int
	for _, d := range ats {
		at := s.begin.Add(d)
		if s.over(at) {
			break
		}
		t, _ := s.place(at)
		k := -1
		for i, w := range s.windows {
			if w == t {
				k = i
			}
		}
		out = append(out, k)
	}
	return out
}

func TestSegmentsPlaceRequests(t *testing.T) {
	s := time.Second
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		cfg  Config
		ats  []time.Duration
		want []int
		// spans are the windows' starts and ends, as offsets
		spans [][2]time.Duration
	}{
		{name: "one window of the duration after the warm-up", cfg: Config{Warmup: s, Duration: 2 * s},
			ats: []time.Duration{0, 999 * ms, s, 2 * s, 2999 * ms, 3 * s, 4 * s}, want: []int{-1, -1, 0, 0, 0},
			spans: [][2]time.Duration{{s, 3 * s}}},
		{name: "a request count ends the one window", cfg: Config{Duration: 10 * s, Requests: 2},
			ats: []time.Duration{0, 10 * ms, 20 * ms}, want: []int{0, 0},
			spans: [][2]time.Duration{{0, 20 * ms}}},
		{name: "a warm-up of requests outlasts its time", cfg: Config{Warmup: 10 * ms, WarmupRequests: 3, Duration: s},
			ats: []time.Duration{0, 20 * ms, 30 * ms, 40 * ms, 50 * ms}, want: []int{-1, -1, -1, 0, 0},
			spans: [][2]time.Duration{{40 * ms, 1040 * ms}}},
		{name: "time windows up to the trials", cfg: Config{Duration: s, Windows: &Windows{MaxTrials: 3}},
			ats: []time.Duration{0, 500 * ms, s, 2500 * ms, 3 * s}, want: []int{0, 0, 1, 2},
			spans: [][2]time.Duration{{0, s}, {s, 2 * s}, {2 * s, 3 * s}}},
		{name: "a gap past two windows' ends", cfg: Config{Duration: s, Windows: &Windows{MaxTrials: 4}},
			ats: []time.Duration{0, 2500 * ms, 3500 * ms, 4 * s}, want: []int{0, 2, 3},
			spans: [][2]time.Duration{{0, s}, {s, 2 * s}, {2 * s, 3 * s}, {3 * s, 4 * s}}},
		{name: "a gap past the last window's end", cfg: Config{Duration: s, Windows: &Windows{MaxTrials: 3}},
			ats: []time.Duration{0, 3 * s}, want: []int{0},
			spans: [][2]time.Duration{{0, s}}},
		{name: "count windows: the count and a second", cfg: Config{Duration: time.Hour, Windows: &Windows{Requests: 2, MaxTrials: 3}},
			ats:   []time.Duration{0, 100 * ms, 1100 * ms, 1200 * ms, 1300 * ms, 2200 * ms, 2300 * ms, 3300 * ms},
			want:  []int{0, 0, 1, 1, 1, 2, 2},
			spans: [][2]time.Duration{{0, 1100 * ms}, {1100 * ms, 2200 * ms}, {2200 * ms, 3300 * ms}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg.Windows != nil {
				w, err := cfg.Windows.withDefaults()
				require.NoError(t, err)
				cfg.Windows = &w
			}
			s := newSegments(cfg, time.Now(), newTally)
			got := placed(s, tc.ats...)
			require.Equal(t, tc.want, got)
			end := s.begin.Add(tc.ats[len(tc.ats)-1])
			s.finish(end, false)
			var spans [][2]time.Duration
			var closed []*tally
			for w := range s.closed {
				closed = append(closed, w)
			}
			for _, w := range s.windows {
				spans = append(spans, [2]time.Duration{w.start.Sub(s.begin), w.end.Sub(s.begin)})
			}
			require.Equal(t, tc.spans, spans)
			require.Equal(t, s.windows, closed, "each window is told once as it closes, in order")
		})
	}
}

func TestStopEndsTheSchedule(t *testing.T) {
	s := newSegments(Config{Duration: time.Second, Windows: &Windows{MaxTrials: 10}}, time.Now(), newTally)
	require.False(t, s.over(s.begin))
	s.stopped.Store(true)
	require.True(t, s.over(s.begin))
}

func TestWindowsAgreeAndTheLastThreeAreReported(t *testing.T) {
	// The first 30 requests fail: the first window's throughput (10 of
	// its 40 answered) is a quarter of the next ones', which agree.
	srv := newFakeServer(t, &fakeServer{code: func(n int64) int {
		if n < 30 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}, delay: func(int64) time.Duration { return 2 * time.Millisecond }})
	arr, err := arrival.NewConstant(400)
	require.NoError(t, err)
	rep, err := Run(context.Background(), Config{URL: srv.URL, Model: "m", Arrivals: arr, Duration: 100 * time.Millisecond,
		Windows: &Windows{Stability: 1, MaxTrials: 10}})
	require.NoError(t, err)
	require.NotNil(t, rep.Stable)
	require.True(t, *rep.Stable, "trials %+v", rep.Trials)
	require.GreaterOrEqual(t, len(rep.Trials), 4, "the first window does not agree with the next")
	require.Less(t, rep.Trials[0].Throughput, rep.Trials[len(rep.Trials)-1].Throughput/2)
	require.Empty(t, rep.Failed, "the report counts the last three windows, which had no failure")
	last := rep.Trials[len(rep.Trials)-3:]
	var due, ok int64
	var span time.Duration
	for _, tr := range last {
		due, ok, span = due+tr.Due, ok+tr.OK, span+tr.Duration
	}
	require.Equal(t, due, rep.Scheduled)
	require.Equal(t, ok, rep.OK)
	require.Equal(t, 300*time.Millisecond, span)
	require.Equal(t, span, rep.Window)
	var seconds int64
	for _, sec := range rep.Seconds {
		seconds += sec.Due
	}
	require.Equal(t, due, seconds, "the seconds are the three windows'")
	require.Len(t, rep.Seconds, 1, "three windows of 100 ms fall in one second")
	require.Greater(t, srv.requests.Load(), due, "the earlier windows were sent too")

	out, err := json.Marshal(rep)
	require.NoError(t, err)
	var back struct {
		Stable bool `json:"stable"`
		Trials []struct {
			DurationS float64 `json:"duration_s"`
			LatencyUS float64 `json:"latency_us"`
		} `json:"trials"`
	}
	require.NoError(t, json.Unmarshal(out, &back))
	require.True(t, back.Stable)
	require.Len(t, back.Trials, len(rep.Trials))
	require.InDelta(t, 0.1, back.Trials[1].DurationS, 1e-9)
	require.Greater(t, back.Trials[1].LatencyUS, 2000.0)
}

func TestWindowsThatNeverAgree(t *testing.T) {
	// Each answer takes longer than the last: latency never settles.
	srv := newFakeServer(t, &fakeServer{delay: func(n int64) time.Duration { return time.Duration(n) * 100 * time.Microsecond }})
	for _, closed := range []bool{false, true} {
		cfg := Config{URL: srv.URL, Model: "m", Rate: 200, Duration: 100 * time.Millisecond, Closed: closed, Seed: 1,
			Windows: &Windows{MaxTrials: 4, Percentile: 90}}
		if closed {
			cfg.Concurrency = 2 // in the open loop, every request is sent
		}
		rep, err := Run(context.Background(), cfg)
		require.NoError(t, err)
		require.NotNil(t, rep.Stable)
		require.False(t, *rep.Stable)
		require.Len(t, rep.Trials, 4, "every trial is measured")
		for i := 1; i < 4; i++ {
			require.Greater(t, rep.Trials[i].Latency, rep.Trials[i-1].Latency)
		}
		require.Equal(t, rep.Trials[1].OK+rep.Trials[2].OK+rep.Trials[3].OK, rep.OK, "the last three are reported")
	}
}

// TestBoundariesAreTold: OnBoundary hears each window's start after the
// warm-up and the last one's end, in order, once each.
func TestBoundariesAreTold(t *testing.T) {
	srv := newFakeServer(t, &fakeServer{})
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{name: "one window", cfg: Config{Warmup: 100 * time.Millisecond}},
		{name: "windows", cfg: Config{Windows: &Windows{Stability: 10, MaxTrials: 5}}},
		{name: "a closed loop's windows", cfg: Config{Closed: true, Concurrency: 1, Windows: &Windows{Stability: 10, MaxTrials: 5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var told []int
			cfg := tc.cfg
			cfg.URL, cfg.Model, cfg.Rate, cfg.Duration, cfg.Seed = srv.URL, "m", 300, 100*time.Millisecond, 2
			cfg.OnBoundary = func(i int) { told = append(told, i) } // the schedule's goroutine, or under the closed loop's lock
			rep, err := Run(context.Background(), cfg)
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(told), 2)
			for i, k := range told {
				require.Equal(t, i, k)
			}
			if cfg.Windows == nil {
				require.Equal(t, []int{0, 1}, told)
				return
			}
			require.GreaterOrEqual(t, told[len(told)-1], len(rep.Trials), "the reported windows' end is told")
		})
	}
}
