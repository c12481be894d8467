package profiler

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestQuantileCI(t *testing.T) {
	tests := []struct {
		n      int
		q      float64
		lo, hi int
	}{
		// Median of 100: 50 ± 1.96·5 = 40.2 … 59.8 → ranks 40 and ⌈60.8⌉ = 61.
		{100, 0.5, 40, 61},
		// Median of 20: 10 ± 4.38 → 5 and ⌈15.38⌉ = 16.
		{20, 0.5, 5, 16},
		// p99 of 20: the upper rank runs past n and is clipped to it.
		{20, 0.99, 18, 20},
		// p99 of 1000: 990 ± 1.96·√9.9 = 983.8 … 996.2 → 983 and ⌈997.2⌉ = 998.
		{1000, 0.99, 983, 998},
		{1, 0.5, 1, 1},
	}
	for _, tt := range tests {
		lo, hi := quantileCI(tt.n, tt.q, 1.96)
		require.Equal(t, [2]int{tt.lo, tt.hi}, [2]int{lo, hi}, "n=%d q=%v", tt.n, tt.q)
	}
}

func TestSummarize(t *testing.T) {
	s := summarize([]float64{5, 1, 4, 2, 3}, 1.96)
	require.Equal(t, 5, s.Samples)
	require.Equal(t, 3.0, s.P50MS)
	require.Equal(t, 5.0, s.P99MS)
	require.Equal(t, 3.0, s.MeanMS)

	empty := summarize(nil, 1.96)
	require.True(t, math.IsNaN(empty.P50MS))
	require.True(t, math.IsInf(empty.P50HalfWidth, 1))
}

func TestStopRuleJudge(t *testing.T) {
	rule := StopRule{MinSamples: 20, MaxSamples: 200, MaxTime: time.Second, CapMinSamples: 5, MedianCI: 0.02, P99CI: 0.10}.withDefaults()
	constant := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = 10
		}
		return out
	}
	noisy := func(n int, spread float64) []float64 {
		rng := rand.New(rand.NewPCG(1, 2))
		out := make([]float64, n)
		for i := range out {
			out[i] = 10 * (1 + spread*rng.Float64())
		}
		return out
	}
	withOutlier := constant(40)
	withOutlier[7] = 30
	tests := []struct {
		name    string
		samples []float64
		elapsed time.Duration
		want    Verdict
	}{
		{"too few samples, however tight", constant(19), 0, Continue},
		{"enough tight samples", constant(20), 0, Stable},
		{"noisy median keeps sampling", noisy(50, 0.5), 0, Continue},
		{"an outlier keeps the p99 open", withOutlier, 0, Continue},
		{"sample cap", noisy(200, 0.5), 0, Capped},
		{"time cap with enough samples", noisy(6, 0.5), 2 * time.Second, Capped},
		{"time cap waits for the cap minimum", noisy(4, 0.5), 2 * time.Second, Continue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, rule.Judge(tt.samples, tt.elapsed))
		})
	}
	require.Contains(t, DefaultStopRule().String(), "±2% and the p99 within ±10%")
}

func TestFitLine(t *testing.T) {
	exact, err := FitLine(50, []int{1, 2, 4, 8}, []float64{3, 5, 9, 17})
	require.NoError(t, err)
	require.InDelta(t, 2, exact.AlphaMS, 1e-12)
	require.InDelta(t, 1, exact.BetaMS, 1e-12)
	require.InDelta(t, 1, float64(exact.R2), 1e-12)
	require.InDelta(t, 0, exact.MaxRelErr, 1e-12)
	require.Equal(t, 4, exact.Points)

	// A bent curve: least squares by hand for b = 1, 2, 3 and L = 1, 2, 4:
	// mean b 2, mean L 7/3, Sxy = 3, Sxx = 2 → α = 1.5, β = −2/3;
	// residuals 1/6, −1/3, 1/6 → SS_res = 1/6, SS_tot = 14/3.
	bent, err := FitLine(100, []int{1, 2, 3}, []float64{1, 2, 4})
	require.NoError(t, err)
	require.InDelta(t, 1.5, bent.AlphaMS, 1e-12)
	require.InDelta(t, -2.0/3, bent.BetaMS, 1e-12)
	require.InDelta(t, 1-(1.0/6)/(14.0/3), float64(bent.R2), 1e-12)
	require.InDelta(t, (1.0/6)/1, bent.MaxRelErr, 1e-12)

	_, err = FitLine(100, []int{4, 4}, []float64{1, 1.1})
	require.ErrorIs(t, err, ErrTooFewPoints)
	flat, err := FitLine(100, []int{1, 2}, []float64{3, 3})
	require.NoError(t, err)
	require.True(t, math.IsNaN(float64(flat.R2)), "R² of a flat line is undefined, not 1")
}
