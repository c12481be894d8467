package interference

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestModelJSONRoundTrip(t *testing.T) {
	samples := synthSamples(50, 8, paperFactor)
	for _, spec := range []Spec{Paper(), {Name: "log", Features: []string{"fixed_self*dram_other", "log_solo_self", Const}, Target: TargetLogFactor, Ridge: 0.5}} {
		m, err := Fit(samples, spec)
		require.NoError(t, err)
		m.Stats.HeldOut = map[string]Quantiles{SplitLOMO: {P50: 0.01, P90: 0.02, P95: 0.03}}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		var back Model
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, m.Spec, back.Spec)
		require.Equal(t, m.Coefficients, back.Coefficients)
		require.Equal(t, m.Stats, back.Stats)
		for _, s := range samples {
			require.Equal(t, m.Predict(s), back.Predict(s))
		}
		var fields map[string]any
		require.NoError(t, json.Unmarshal(b, &fields))
		for _, k := range []string{"name", "features", "target", "ridge", "coefficients", "min_factor", "max_factor", "stats"} {
			require.Contains(t, fields, k)
		}
		stats := fields["stats"].(map[string]any)
		for _, k := range []string{"samples", "r2", "rmse", "held_out"} {
			require.Contains(t, stats, k)
		}
	}
}

func TestModelUnmarshalRejects(t *testing.T) {
	tests := []struct {
		name, doc string
		want      error
	}{
		{"count mismatch", `{"name":"x","features":["l2_self","const"],"target":"factor","coefficients":[1],"min_factor":1,"max_factor":2}`, ErrBadSpec},
		{"unknown feature", `{"name":"x","features":["warp_self"],"target":"factor","coefficients":[1],"min_factor":1,"max_factor":2}`, ErrUnknownFeature},
		{"bad target", `{"name":"x","features":["const"],"target":"quadratic","coefficients":[1],"min_factor":1,"max_factor":2}`, ErrBadSpec},
		{"bad clamp", `{"name":"x","features":["const"],"target":"factor","coefficients":[1],"min_factor":2,"max_factor":1}`, ErrBadSpec},
		{"zero floor", `{"name":"x","features":["const"],"target":"factor","coefficients":[1],"min_factor":0,"max_factor":1}`, ErrBadSpec},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m Model
			require.ErrorIs(t, json.Unmarshal([]byte(tc.doc), &m), tc.want)
		})
	}
	var m Model
	require.Error(t, json.Unmarshal([]byte(`{"name":`), &m))
}

func TestPredictClampsAndDefends(t *testing.T) {
	m := &Model{
		Spec:         Spec{Name: "hand", Features: []string{"dram_other", Const}, Target: TargetFactor},
		Coefficients: []float64{0.01, 1},
		MinFactor:    1,
		MaxFactor:    1.5,
	}
	at := func(dram float64) Sample {
		return Sample{Self: Side{SoloMS: 2}, Other: Side{Util: Util{DRAM: dram}}}
	}
	tests := []struct {
		name string
		dram float64
		want float64
	}{
		{"inside", 20, 1.2},
		{"above the ceiling", 1e6, 1.5},
		{"below the floor", -500, 1},
		{"unknown utilisation is conservative", math.NaN(), 1.5},
		{"infinite utilisation is conservative", math.Inf(1), 1.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, m.Predict(at(tc.dram)), 1e-12)
		})
	}
	_, err := m.PredictChecked(at(math.NaN()))
	require.ErrorIs(t, err, ErrBadSample)
	require.InDelta(t, 2.4, m.PredictLatencyMS(at(20)), 1e-12)
}
