package arrival

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// moments returns the mean rate (1 / mean gap) and the coefficient of
// variation of n gaps.
func moments(a Arrivals, n int) (rate, cv float64) {
	var sum, sq float64
	for range n {
		g := a.Next().Seconds()
		sum += g
		sq += g * g
	}
	mean := sum / float64(n)
	return 1 / mean, math.Sqrt(sq/float64(n)-mean*mean) / mean
}

func TestProcessesMeanRateAndCV(t *testing.T) {
	const draws = 400_000
	for _, tc := range []struct {
		spec string
		rate float64
		cv   float64
	}{
		{"poisson", 200, 1},
		{"poisson", 25_000, 1},
		{"gamma:1", 200, 1},
		{"gamma:shape=4", 300, 0.5},
		{"gamma:cv=2", 300, 2},
		{"gamma:0.5", 1000, math.Sqrt2},
		{"gamma:cv=0.1", 50, 0.1},
		{"constant", 300, 0},
		{"constant", 7, 0},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			s, err := Parse(tc.spec)
			require.NoError(t, err)
			require.InDelta(t, tc.cv, s.CV(), 1e-12)
			a, err := s.New(tc.rate, 7, nil)
			require.NoError(t, err)
			require.Equal(t, tc.rate, a.Rate())
			rate, cv := moments(a, draws)
			require.InEpsilon(t, tc.rate, rate, 0.01, "mean rate")
			if tc.cv == 0 {
				require.InDelta(t, 0, cv, 1e-4, "even gaps (to the nanosecond each)")
				return
			}
			require.InEpsilon(t, tc.cv, cv, 0.03, "coefficient of variation")
		})
	}
}

func TestSeeded(t *testing.T) {
	for _, spec := range []string{"poisson", "gamma:0.3", "gamma:cv=0.5"} {
		s, err := Parse(spec)
		require.NoError(t, err)
		draw := func(seed uint64) []time.Duration {
			a, err := s.New(100, seed, nil)
			require.NoError(t, err)
			out := make([]time.Duration, 100)
			for i := range out {
				out[i] = a.Next()
			}
			return out
		}
		require.Equal(t, draw(1), draw(1), spec)
		require.NotEqual(t, draw(1), draw(2), spec)
		for _, g := range draw(3) {
			require.GreaterOrEqual(t, g, time.Duration(0))
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		str  string
	}{
		{"poisson", Spec{Kind: KindPoisson}, "poisson"},
		{" Poisson ", Spec{Kind: KindPoisson}, "poisson"},
		{"constant", Spec{Kind: KindConstant}, "constant"},
		{"gamma:0.5", Spec{Kind: KindGamma, Shape: 0.5}, "gamma:shape=0.5"},
		{"gamma:shape=2", Spec{Kind: KindGamma, Shape: 2}, "gamma:shape=2"},
		{"gamma:k=3", Spec{Kind: KindGamma, Shape: 3}, "gamma:shape=3"},
		{"gamma:cv=2", Spec{Kind: KindGamma, Shape: 0.25}, "gamma:shape=0.25"},
		{"gamma:CV=0.5", Spec{Kind: KindGamma, Shape: 4}, "gamma:shape=4"},
		{"trace:/data/azure.csv", Spec{Kind: KindTrace, Path: "/data/azure.csv"}, "trace:/data/azure.csv"},
		{"trace:a.csv@2.5", Spec{Kind: KindTrace, Path: "a.csv", Scale: 2.5}, "trace:a.csv@2.5"},
		{"trace:me@host.csv", Spec{Kind: KindTrace, Path: "me@host.csv"}, "trace:me@host.csv"},
		{"trace:c:/x.csv@0.1", Spec{Kind: KindTrace, Path: "c:/x.csv", Scale: 0.1}, "trace:c:/x.csv@0.1"},
		{"intervals:gaps.txt", Spec{Kind: KindTrace, Path: "gaps.txt", Scale: 1, Intervals: true}, "intervals:gaps.txt"},
		{"intervals:gaps.txt@2", Spec{Kind: KindTrace, Path: "gaps.txt", Scale: 2, Intervals: true}, "intervals:gaps.txt@2"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.str, got.String())
			again, err := Parse(got.String())
			require.NoError(t, err)
			require.Equal(t, got, again)
		})
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct {
		in, says string
	}{
		{"", "empty"},
		{"uniform", `"uniform" is not an arrival process`},
		{"poisson:2", "poisson takes no parameter"},
		{"constant:5", "constant takes no parameter"},
		{"gamma", "gamma needs a shape"},
		{"gamma:", "gamma needs a shape"},
		{"gamma:0", `shape "0" is not a positive number`},
		{"gamma:-1", "not a positive number"},
		{"gamma:cv=0", `cv "0" is not a positive number`},
		{"gamma:cv=x", "not a positive number"},
		{"gamma:NaN", "not a positive number"},
		{"gamma:Inf", "not a positive number"},
		{"gamma:cv=1e-200", "gives no usable shape"},
		{"gamma:mean=3", `"mean" is not a gamma parameter`},
		{"trace:", "trace needs a file"},
		{"trace:@2", "trace needs a file"},
		{"trace:a.csv@0", `rate scale "0"`},
		{"trace:a.csv@-1", "not a positive number"},
		{"intervals:", "intervals needs a file"},
		{"intervals:a.txt@0", `rate scale "0"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := Parse(tc.in)
			require.ErrorIs(t, err, ErrBadSpec)
			require.Contains(t, err.Error(), tc.says)
			require.Contains(t, err.Error(), "gamma:cv=<c>", "the error lists the forms")
		})
	}
}

func TestNewRejects(t *testing.T) {
	for _, rate := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		_, err := Spec{Kind: KindPoisson}.New(rate, 1, nil)
		require.ErrorIs(t, err, ErrBadRate)
		_, err = Spec{Kind: KindGamma, Shape: 2}.New(rate, 1, nil)
		require.ErrorIs(t, err, ErrBadRate)
		_, err = Spec{Kind: KindConstant}.New(rate, 1, nil)
		require.ErrorIs(t, err, ErrBadRate)
	}
	_, err := Spec{Kind: KindTrace, Path: "x.csv"}.New(10, 1, nil)
	require.ErrorIs(t, err, ErrNoTrace)
	_, err = Spec{Kind: KindTrace, Path: "x.csv", Scale: 2}.New(10, 1, nil)
	require.ErrorIs(t, err, ErrNoTrace)
	_, err = Spec{Kind: "uniform"}.New(10, 1, nil)
	require.ErrorIs(t, err, ErrBadSpec)
	_, err = NewGamma(10, 0, 1)
	require.ErrorIs(t, err, ErrBadSpec)
}

func BenchmarkNext(b *testing.B) {
	for _, spec := range []string{"poisson", "gamma:0.5", "gamma:4"} {
		b.Run(spec, func(b *testing.B) {
			s, err := Parse(spec)
			require.NoError(b, err)
			a, err := s.New(1000, 1, nil)
			require.NoError(b, err)
			var sum time.Duration
			for b.Loop() {
				sum += a.Next()
			}
			require.Positive(b, sum)
		})
	}
}

// TestConstantDoesNotDrift: n even gaps add up to n/rate to the
// nanosecond, for a rate whose gap is not a whole number of nanoseconds.
func TestConstantDoesNotDrift(t *testing.T) {
	c, err := NewConstant(3)
	require.NoError(t, err)
	var sum time.Duration
	for range 3_000_000 {
		sum += c.Next()
	}
	require.Equal(t, 1_000_000*time.Second, sum)
}
