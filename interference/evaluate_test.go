package interference

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEvaluateByHand(t *testing.T) {
	m := &Model{
		Spec:         Spec{Name: "hand", Features: []string{"dram_other", Const}, Target: TargetFactor},
		Coefficients: []float64{0.01, 1},
		MinFactor:    1,
		MaxFactor:    3,
	}
	mk := func(solo, dramOther, measured float64) Sample {
		return Sample{
			Self:        Side{Model: "a", Batch: 1, Size: 50, SoloMS: solo},
			Other:       Side{Model: "b", Batch: 1, Size: 50, Util: Util{DRAM: dramOther}},
			CoLocatedMS: measured,
		}
	}
	test := []Sample{
		mk(10, 10, 11), // factor 1.1 → 11 ms: error 0
		mk(10, 20, 10), // factor 1.2 → 12 ms: |12−10|/10 = 0.2
		mk(4, 50, 5),   // factor 1.5 → 6 ms: |6−5|/5 = 0.2
		mk(2, 0, 2.2),  // factor 1.0 → 2 ms: 0.2/2.2
		mk(1, 300, 2),  // factor 4 clamped to 3 → 3 ms: |3−2|/2 = 0.5
	}
	errs, err := Evaluate(m, test)
	require.NoError(t, err)
	require.InDeltaSlice(t, []float64{0, 0.2 / 2.2, 0.2, 0.2, 0.5}, []float64(errs), 1e-12)
	q := errs.Quantiles()
	// Nearest rank over 5: p50 is the 3rd smallest, p90 and p95 the 5th.
	require.InDelta(t, 0.2, q.P50, 1e-12)
	require.InDelta(t, 0.5, q.P90, 1e-12)
	require.InDelta(t, 0.5, q.P95, 1e-12)
	cdf := errs.CDF()
	require.Len(t, cdf, 4)
	require.InDelta(t, 0.2, cdf[0].Fraction, 1e-12)
	require.InDelta(t, 0.8, cdf[2].Fraction, 1e-12)
	require.InDelta(t, 0.2, cdf[2].Error, 1e-12)
	require.Equal(t, 1.0, cdf[3].Fraction)
}

func TestQuantileNearestRank(t *testing.T) {
	// Deliberately unsorted: 0.01 .. 0.10.
	e := Errors{0.10, 0.03, 0.05, 0.01, 0.09, 0.02, 0.08, 0.04, 0.07, 0.06}
	tests := []struct {
		q, want float64
	}{
		{0, 0.01}, {0.1, 0.01}, {0.11, 0.02}, {0.5, 0.05}, {0.9, 0.09}, {0.95, 0.10}, {1, 0.10},
	}
	for _, tc := range tests {
		require.InDelta(t, tc.want, e.Quantile(tc.q), 1e-15, "q=%v", tc.q)
	}
	require.True(t, math.IsNaN(Errors{}.Quantile(0.5)))
	require.Equal(t, 0.10, e[0], "Quantile must not reorder its receiver")
}

func TestEvaluateRejectsUnmeasured(t *testing.T) {
	m, err := Fit(synthSamples(20, 2, paperFactor), Paper())
	require.NoError(t, err)
	s := synthSamples(1, 4, paperFactor)
	s[0].CoLocatedMS = math.NaN()
	_, err = Evaluate(m, s)
	require.ErrorIs(t, err, ErrBadSample)
}
