package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/control"
)

func TestRateMeterMeasuresOverTheNodesWindows(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	// hits counts n requests of model evenly from from to to.
	hits := func(r *rateMeter, model string, n int, from, to time.Duration) {
		for i := range n {
			r.hit(model, at(from+time.Duration(i)*(to-from)/time.Duration(n)))
		}
	}
	tests := []struct {
		name      string
		run       func(r *rateMeter) (map[string]float64, map[string]bool)
		want      map[string]float64
		wantEarly map[string]bool // closeShort's models not judged yet
		period    bool            // want is closePeriod's, else closeShort's
	}{
		{name: "a model's first request just before a short close is one request over the whole window, not judged yet",
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				r.hit("a", at(990*time.Millisecond))
				return shortOf(r.closeShort(at(time.Second)))
			},
			want: map[string]float64{"a": 1}, wantEarly: map[string]bool{"a": true}},
		{name: "a load that began 0.4 s into a 2 s window is measured from its first request",
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				hits(r, "a", 64, 400*time.Millisecond, 2*time.Second) // 40 req/s
				return shortOf(r.closeShort(at(2 * time.Second)))
			},
			want: map[string]float64{"a": 63 / 1.6}, wantEarly: map[string]bool{}},
		{name: "a load that began 0.4 s into a second is counted over it and judged at the next",
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				hits(r, "a", 24, 400*time.Millisecond, time.Second)
				return shortOf(r.closeShort(at(time.Second)))
			},
			want: map[string]float64{"a": 24}, wantEarly: map[string]bool{"a": true}},
		{name: "a burst in the last 0.2 s of a window is counted over the whole window and judged at the next",
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				hits(r, "a", 8, 800*time.Millisecond, time.Second)
				return shortOf(r.closeShort(at(time.Second)))
			},
			want: map[string]float64{"a": 8}, wantEarly: map[string]bool{"a": true}},
		{name: "the window after an onset is measured whole",
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				hits(r, "a", 8, 800*time.Millisecond, time.Second)
				r.closeShort(at(time.Second))
				hits(r, "a", 20, 1500*time.Millisecond, 2*time.Second) // busy in the window before
				return shortOf(r.closeShort(at(2 * time.Second)))
			},
			want: map[string]float64{"a": 20}, wantEarly: map[string]bool{}},
		{name: "a model first seen in the second short window shares that window",
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				hits(r, "a", 4, 0, time.Second)
				r.closeShort(at(time.Second))
				hits(r, "b", 2, time.Second, 1500*time.Millisecond)
				return shortOf(r.closeShort(at(1500 * time.Millisecond)))
			},
			want: map[string]float64{"a": 0, "b": 4}, wantEarly: map[string]bool{"b": true}},
		{name: "a short close at the same instant keeps the last window's rates",
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				hits(r, "a", 2, 0, time.Second)
				r.closeShort(at(time.Second))
				r.hit("a", at(time.Second))
				return shortOf(r.closeShort(at(time.Second)))
			},
			want: map[string]float64{"a": 2}, wantEarly: map[string]bool{}},
		{name: "a load that began in the last tenth of a period is folded from its first request",
			period: true,
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				hits(r, "a", 30, 9*time.Second, 10*time.Second)
				return estimatesOf(r.closePeriod(at(10 * time.Second))), nil
			},
			want: map[string]float64{"a": 29}},
		{name: "a burst in the last 0.2 s of a period is folded over the whole period",
			period: true,
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				hits(r, "a", 30, 9800*time.Millisecond, 10*time.Second)
				return estimatesOf(r.closePeriod(at(10 * time.Second))), nil
			},
			want: map[string]float64{"a": 3}},
		{name: "before its first period ends a model's estimate is its rate so far",
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				hits(r, "a", 120, 2*time.Second, 5*time.Second) // 40 req/s from 2 s
				r.hit("b", at(4900*time.Millisecond))           // too recent to judge
				return r.estimates(at(5 * time.Second)), nil
			},
			want: map[string]float64{"a": 119.0 / 3, "b": 0}},
		{name: "later periods fold into the EWMA with the meter's weight",
			period: true,
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				hits(r, "a", 100, 0, 10*time.Second)
				r.closePeriod(at(10 * time.Second)) // 10 req/s, taken as it is
				hits(r, "a", 20, 10*time.Second, 20*time.Second)
				r.hit("b", at(15*time.Second))
				return estimatesOf(r.closePeriod(at(20 * time.Second))), nil // a: 0.5·2 + 0.5·10; b: first
			},
			want: map[string]float64{"a": 6, "b": 0.1}},
		{name: "the last period's own rates, beside the EWMA",
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				hits(r, "a", 100, 0, 10*time.Second)
				r.closePeriod(at(10 * time.Second))
				hits(r, "a", 20, 10*time.Second, 20*time.Second)
				_, own := r.closePeriod(at(20 * time.Second))
				return own, nil
			},
			want: map[string]float64{"a": 2}},
		{name: "short windows leave the period's count alone",
			period: true,
			run: func(r *rateMeter) (map[string]float64, map[string]bool) {
				hits(r, "a", 50, 0, time.Second)
				r.closeShort(at(time.Second))
				r.closeShort(at(2 * time.Second))
				return estimatesOf(r.closePeriod(at(10 * time.Second))), nil
			},
			want: map[string]float64{"a": 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRateMeter(0.5, t0)
			got, early := tt.run(r)
			require.Len(t, got, len(tt.want))
			for name, want := range tt.want {
				require.InDelta(t, want, got[name], 1e-9, name)
			}
			require.Equal(t, tt.wantEarly, early)
			if tt.period {
				require.Equal(t, got, r.estimates(t0), "the estimates are what the last period folded")
			}
		})
	}
}

// A request answered from the response cache is taken back from the rates
// the planner and the surge check read, and counted in the cache's own
// rate, so that the status can say what the cache answered.
func TestRateMeterCountsCacheHitsApart(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	r := newRateMeter(0.5, t0)
	for i := range 10 {
		r.hit("a", t0)
		if i < 8 {
			r.unhit("a") // a hit
		}
	}
	short := r.closeShort(t0.Add(time.Second))
	require.Equal(t, map[string]float64{"a": 2}, short.Rates)
	require.Empty(t, short.Early)
	require.Equal(t, map[string]float64{"a": 2}, r.current())
	require.Equal(t, 8.0, r.cachedRate("a"))
	require.Zero(t, r.cachedRate("b"))
	require.Equal(t, map[string]float64{"a": 0.2}, estimatesOf(r.closePeriod(t0.Add(10*time.Second))))
	r.closeShort(t0.Add(2 * time.Second))
	require.Zero(t, r.cachedRate("a"), "a second without hits")
}

// shortOf is closeShort's rates and early models.
func shortOf(s control.Short) (map[string]float64, map[string]bool) { return s.Rates, s.Early }

// estimatesOf is closePeriod's estimates.
func estimatesOf(estimates, _ map[string]float64) map[string]float64 { return estimates }

// counted is how many requests of model the meter's period has counted.
func (r *rateMeter) counted(model string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.models[model]; m != nil {
		return m.count.Requests()
	}
	return 0
}
