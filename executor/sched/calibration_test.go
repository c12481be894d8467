package sched

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCalibration(t *testing.T) {
	const pred = 10 * time.Millisecond
	ms := func(f float64) time.Duration { return time.Duration(f * float64(pred)) }
	for _, tc := range []struct {
		name    string
		ratios  []float64 // measured / predicted of successive batches, 1 ms apart
		idle    time.Duration
		ceiling float64 // 0: CalibrationMax
		want    float64
	}{
		{"too few batches", []float64{2, 2, 2, 2, 2, 2, 2}, 0, 0, 1},
		{"steady slowdown followed", []float64{1.03, 1.03, 1.03, 1.03, 1.03, 1.03, 1.03, 1.03}, 0, 0, 1.03},
		{"one outlier ignored", []float64{1, 1, 1, 3, 1, 1, 1, 1, 1}, 0, 0, 1},
		{"two outliers followed", []float64{1, 1, 3, 1, 3, 1, 1, 1, 1}, 0, 0, 3},
		{"faster device stays at the profile", []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 0, 0, 1},
		{"capped", []float64{50, 50, 50, 50, 50, 50, 50, 50}, 0, 0, CalibrationMax},
		{"forgotten after idling", []float64{2, 2, 2, 2, 2, 2, 2, 2}, CalibrationForget + time.Millisecond, 0, 1},
		{"small change not passed on", []float64{1.005, 1.005, 1.005, 1.005, 1.005, 1.005, 1.005, 1.005}, 0, 0, 1},
		// The H100 case: a few batches far slower than the profile.
		{"rare slow batches stop at the ceiling", []float64{1, 1, 25, 1, 1, 30, 1, 1, 20, 1}, 0, 8, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ceiling := tc.ceiling
			if ceiling == 0 {
				ceiling = CalibrationMax
			}
			c := NewCalibration(ceiling)
			now := time.Duration(0)
			for _, r := range tc.ratios {
				now += time.Millisecond
				// The scheduler's ℓ is the profile scaled by the factor.
				c.Observe(now, ms(r), time.Duration(float64(pred)*c.Factor()))
			}
			if tc.idle > 0 {
				f, changed := c.Idle(now + tc.idle)
				require.True(t, changed)
				require.Equal(t, 1.0, f)
			}
			require.InDelta(t, tc.want, c.Factor(), 1e-9)
		})
	}
}

func TestCalibrationCeiling(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		slo, l1 time.Duration
		want    float64
	}{
		{"half the SLO over ℓ(1)", 5 * ms, ms / 4, 10},
		{"never below 1", 5 * ms, 4 * ms, 1},
		{"never above the cap", time.Second, ms / 10, CalibrationMax},
		{"no SLO", 0, ms, CalibrationMax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.InDelta(t, tt.want, CalibrationCeiling(tt.slo, tt.l1), 1e-9)
		})
	}
	c := NewCalibration(CalibrationMax)
	for i := range 10 {
		c.Observe(time.Duration(i+1)*ms, 10*ms, time.Duration(float64(ms)*c.Factor()))
	}
	require.InDelta(t, 10, c.Factor(), 1e-9)
	f, changed := c.SetCeiling(4)
	require.True(t, changed)
	require.InDelta(t, 4, f, 1e-9)
	_, changed = c.SetCeiling(6)
	require.False(t, changed, "a higher ceiling leaves the factor until batches move it")
}

func TestCalibrationTypicalIsTheMedian(t *testing.T) {
	ms := time.Millisecond
	c := NewCalibration(CalibrationMax)
	base, err := LinearLatency(ms, ms, 4)
	require.NoError(t, err)
	// Every fifth batch takes ten times the profile: the factor follows the
	// slow ones, the typical ratio stays at the fast ones.
	for i := range 20 {
		r := 1.1
		if i%5 == 4 {
			r = 10
		}
		c.Observe(time.Duration(i+1)*ms, time.Duration(r*float64(2*ms)), time.Duration(float64(2*ms)*c.Factor()))
	}
	require.InDelta(t, 10, c.Factor(), 1e-9)
	require.InDelta(t, 1.1, c.Typical(), 1e-9)
	lat, admit := c.apply(base)
	require.Equal(t, 20*ms, lat.At(1))
	require.Equal(t, time.Duration(1.1*float64(2*ms)), admit)
	s, err := New(Config{Policy: Eager{}}, newRecorder())
	require.NoError(t, err)
	require.NoError(t, s.AddModel(0, 0, ModelConfig{Latency: base}))
	got, err := s.Recalibrate(0, 0, base, &c)
	require.NoError(t, err)
	require.Equal(t, lat, got, "Recalibrate plans with the factor's ℓ")
	f, changed := c.Idle(time.Hour)
	require.True(t, changed)
	require.Equal(t, 1.0, f)
	require.Equal(t, 1.0, c.Typical())
}
