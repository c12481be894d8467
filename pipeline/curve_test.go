package pipeline

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCurve(t *testing.T) {
	r, err := Curve(twoTasks(), 4, []float64{0.5, 1, 2, 3})
	require.NoError(t, err)
	require.InEpsilon(t, 200, r.FullAccuracyMax, 1e-3)
	require.InEpsilon(t, 2, r.PlannedCapacityRatio, 1e-3)
	require.Len(t, r.Points, 4)
	require.Equal(t, HardwareScaling, r.Points[0].Plan.Scaling)
	require.Equal(t, 2, r.Points[0].Plan.Workers)
	require.InDelta(t, 1, r.Points[1].RelativeAccuracy, 1e-9)
	require.Equal(t, AccuracyScaling, r.Points[2].Plan.Scaling)
	require.False(t, r.Points[2].Overloaded)
	// 3 × 200 is above the 400 any variants carry.
	require.True(t, r.Points[3].Overloaded)
	require.InEpsilon(t, 400, r.Points[3].Plan.Demand, 1e-3)

	_, err = Curve(twoTasks(), 1, []float64{1})
	require.ErrorIs(t, err, ErrOverloaded)
	_, err = Curve(&Pipeline{Name: "empty"}, 4, nil)
	require.ErrorIs(t, err, ErrBadPipeline)
}
