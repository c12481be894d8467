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
		name   string
		ratios []float64 // measured / predicted of successive batches, 1 ms apart
		idle   time.Duration
		want   float64
	}{
		{"too few batches", []float64{2, 2, 2, 2, 2, 2, 2}, 0, 1},
		{"steady slowdown followed", []float64{1.03, 1.03, 1.03, 1.03, 1.03, 1.03, 1.03, 1.03}, 0, 1.03},
		{"one outlier ignored", []float64{1, 1, 1, 3, 1, 1, 1, 1, 1}, 0, 1},
		{"two outliers followed", []float64{1, 1, 3, 1, 3, 1, 1, 1, 1}, 0, 3},
		{"faster device stays at the profile", []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 0, 1},
		{"capped", []float64{50, 50, 50, 50, 50, 50, 50, 50}, 0, CalibrationMax},
		{"forgotten after idling", []float64{2, 2, 2, 2, 2, 2, 2, 2}, CalibrationForget + time.Millisecond, 1},
		{"small change not passed on", []float64{1.005, 1.005, 1.005, 1.005, 1.005, 1.005, 1.005, 1.005}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCalibration()
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
