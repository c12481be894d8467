package interference

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFitRecoversKnownCoefficients(t *testing.T) {
	tests := []struct {
		name   string
		spec   Spec
		factor func(Sample) float64
		want   []float64
	}{
		{
			name:   "paper form, factor target",
			spec:   Paper(),
			factor: paperFactor,
			want:   paperTruth,
		},
		{
			name: "multiplicative form, log target",
			spec: Spec{Name: "log", Features: []string{"dram_other", "log_batch_self", Const}, Target: TargetLogFactor},
			factor: func(s Sample) float64 {
				return math.Exp(0.002*s.Other.Util.DRAM - 0.01*math.Log(float64(s.Self.Batch)) + 0.05)
			},
			want: []float64{0.002, -0.01, 0.05},
		},
		{
			name: "slowdown form, log slowdown target",
			spec: Spec{Name: "slow", Features: []string{"l2_other", Const}, Target: TargetLogSlowdown},
			factor: func(s Sample) float64 {
				return 1 + math.Exp(0.03*s.Other.Util.L2-3)
			},
			want: []float64{0.03, -3},
		},
		{
			name:   "no intercept",
			spec:   Spec{Name: "noint", Features: []string{"l2_self", "dram_other"}, Target: TargetFactor},
			factor: func(s Sample) float64 { return 0.05*s.Self.Util.L2 + 0.02*s.Other.Util.DRAM },
			want:   []float64{0.05, 0.02},
		},
		{
			name:   "product feature",
			spec:   Spec{Name: "prod", Features: []string{"l2_self*dram_other", Const}, Target: TargetFactor},
			factor: func(s Sample) float64 { return 1 + 1e-4*s.Self.Util.L2*s.Other.Util.DRAM },
			want:   []float64{1e-4, 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			samples := synthSamples(60, 3, tc.factor)
			m, err := Fit(samples, tc.spec)
			require.NoError(t, err)
			require.InDeltaSlice(t, tc.want, m.Coefficients, 1e-9)
			require.InDelta(t, 1.0, m.Stats.R2, 1e-9)
			require.InDelta(t, 0.0, m.Stats.RMSE, 1e-9)
			require.Equal(t, len(samples), m.Stats.Samples)
			for _, s := range samples[:10] {
				require.InDelta(t, s.Factor(), m.Predict(s), 1e-9, describe(s))
			}
		})
	}
}

func TestFitRidgeShrinks(t *testing.T) {
	samples := synthSamples(80, 5, paperFactor)
	norm := func(c []float64) float64 {
		var s float64
		for _, v := range c[:4] { // the intercept is not penalised
			s += v * v
		}
		return s
	}
	prev := math.Inf(1)
	for _, lambda := range []float64{0, 0.01, 0.1, 1, 10} {
		spec := Paper()
		spec.Ridge = lambda
		m, err := Fit(samples, spec)
		require.NoError(t, err)
		n := norm(m.Coefficients)
		require.Less(t, n, prev, "λ=%v", lambda)
		prev = n
	}
}

func TestFitClampRange(t *testing.T) {
	samples := synthSamples(40, 9, paperFactor)
	m, err := Fit(samples, Paper())
	require.NoError(t, err)
	maxF := 0.0
	for _, s := range samples {
		maxF = max(maxF, s.Factor())
	}
	require.Equal(t, 1.0, m.MinFactor, "all factors ≥ 1 → floor 1")
	require.InDelta(t, 2*maxF-1, m.MaxFactor, 1e-12)

	// Data measuring a speed-up lowers the floor to what was measured.
	below := synthSamples(40, 9, func(s Sample) float64 { return 0.9 + 0.001*s.Other.Util.DRAM })
	m, err = Fit(below, Spec{Name: "b", Features: []string{"dram_other", Const}, Target: TargetFactor})
	require.NoError(t, err)
	minF := math.Inf(1)
	for _, s := range below {
		minF = min(minF, s.Factor())
	}
	require.Equal(t, minF, m.MinFactor)
	require.Less(t, m.MinFactor, 1.0)
}

func TestFitErrors(t *testing.T) {
	good := synthSamples(20, 1, paperFactor)
	nanSM := synthSamples(20, 1, paperFactor)
	for i := range nanSM {
		nanSM[i].Self.Util.SM = math.NaN()
	}
	unmeasured := synthSamples(20, 1, paperFactor)
	unmeasured[3].CoLocatedMS = 0
	constant := synthSamples(20, 1, paperFactor)
	for i := range constant {
		constant[i].Self.Util.L2 = 7
	}
	tests := []struct {
		name    string
		samples []Sample
		spec    Spec
		want    error
	}{
		{"too few samples", good[:5], Paper(), ErrTooFewSamples},
		{"unknown feature", good, Spec{Name: "x", Features: []string{"nope_self"}, Target: TargetFactor}, ErrUnknownFeature},
		{"unknown target", good, Spec{Name: "x", Features: []string{Const}, Target: "cubic"}, ErrBadSpec},
		{"negative ridge", good, Spec{Name: "x", Features: []string{Const}, Target: TargetFactor, Ridge: -1}, ErrBadSpec},
		{"empty name", good, Spec{Features: []string{Const}, Target: TargetFactor}, ErrBadSpec},
		{"unknown SM utilisation", nanSM, Spec{Name: "sm", Features: []string{"sm_self", Const}, Target: TargetFactor}, ErrBadSample},
		{"sample without measurement", unmeasured, Paper(), ErrBadSample},
		{"constant feature", constant, Paper(), ErrSingular},
		{"collinear features", good, Spec{Name: "c", Features: []string{"size_self", "size_other", Const}, Target: TargetFactor}, ErrSingular},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fit(tc.samples, tc.spec)
			require.ErrorIs(t, err, tc.want)
		})
	}
}
