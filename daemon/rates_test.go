package daemon

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRateMeterMeasuresOverTheNodesWindows(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	tests := []struct {
		name   string
		run    func(r *rateMeter) map[string]float64
		want   map[string]float64
		period bool // want is closePeriod's, else closeShort's
	}{
		{name: "a model's first request just before a short close is one request over the whole window",
			run: func(r *rateMeter) map[string]float64 {
				r.hit("a") // at 990 ms: the window began at the meter's start
				return r.closeShort(at(time.Second))
			},
			want: map[string]float64{"a": 1}},
		{name: "a model first seen in the second short window shares that window",
			run: func(r *rateMeter) map[string]float64 {
				for range 4 {
					r.hit("a")
				}
				r.closeShort(at(time.Second))
				r.hit("b")
				r.hit("b")
				return r.closeShort(at(1500 * time.Millisecond))
			},
			want: map[string]float64{"a": 0, "b": 4}},
		{name: "a short close at the same instant keeps the last window's rates",
			run: func(r *rateMeter) map[string]float64 {
				r.hit("a")
				r.hit("a")
				r.closeShort(at(time.Second))
				r.hit("a")
				return r.closeShort(at(time.Second))
			},
			want: map[string]float64{"a": 2}},
		{name: "a model first seen in the last tenth of a period is folded over the whole period",
			period: true,
			run: func(r *rateMeter) map[string]float64 {
				for range 30 {
					r.hit("a")
				}
				return estimatesOf(r.closePeriod(at(10 * time.Second)))
			},
			want: map[string]float64{"a": 3}},
		{name: "later periods fold into the EWMA with the meter's weight",
			period: true,
			run: func(r *rateMeter) map[string]float64 {
				for range 100 {
					r.hit("a")
				}
				r.closePeriod(at(10 * time.Second)) // 10 req/s, taken as it is
				for range 20 {
					r.hit("a")
				}
				r.hit("b")
				return estimatesOf(r.closePeriod(at(20 * time.Second))) // a: 0.5·2 + 0.5·10; b: first
			},
			want: map[string]float64{"a": 6, "b": 0.1}},
		{name: "the last period's own rates, beside the EWMA",
			run: func(r *rateMeter) map[string]float64 {
				for range 100 {
					r.hit("a")
				}
				r.closePeriod(at(10 * time.Second))
				for range 20 {
					r.hit("a")
				}
				_, own := r.closePeriod(at(20 * time.Second))
				return own
			},
			want: map[string]float64{"a": 2}},
		{name: "short windows leave the period's count alone",
			period: true,
			run: func(r *rateMeter) map[string]float64 {
				for range 50 {
					r.hit("a")
				}
				r.closeShort(at(time.Second))
				r.closeShort(at(2 * time.Second))
				return estimatesOf(r.closePeriod(at(10 * time.Second)))
			},
			want: map[string]float64{"a": 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRateMeter(0.5, t0)
			got := tt.run(r)
			require.Len(t, got, len(tt.want))
			for name, want := range tt.want {
				require.InDelta(t, want, got[name], 1e-9, name)
			}
			if tt.period {
				require.Equal(t, got, r.estimates(), "the estimates are what the last period folded")
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
		r.hit("a")
		if i < 8 {
			r.unhit("a") // a hit
		}
	}
	require.Equal(t, map[string]float64{"a": 2}, r.closeShort(t0.Add(time.Second)))
	require.Equal(t, map[string]float64{"a": 2}, r.current())
	require.Equal(t, 8.0, r.cachedRate("a"))
	require.Zero(t, r.cachedRate("b"))
	require.Equal(t, map[string]float64{"a": 0.2}, estimatesOf(r.closePeriod(t0.Add(10*time.Second))))
	r.closeShort(t0.Add(2 * time.Second))
	require.Zero(t, r.cachedRate("a"), "a second without hits")
}

// estimatesOf is closePeriod's estimates.
func estimatesOf(estimates, _ map[string]float64) map[string]float64 { return estimates }
