package control

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFold(t *testing.T) {
	var e Estimate
	require.Equal(t, 100.0, e.Fold(100, 0.5), "the first period as it is")
	require.Equal(t, 150.0, e.Fold(200, 0.5))
	require.Equal(t, 160.0, e.Fold(200, 0.2))
	require.Equal(t, 3, e.Periods)
}

func TestSurge(t *testing.T) {
	for _, tc := range []struct {
		name            string
		short, assigned map[string]float64
		want            string
	}{
		{"none", map[string]float64{"a": 10}, map[string]float64{"a": 10}, ""},
		{"above 1.25x", map[string]float64{"a": 13}, map[string]float64{"a": 10}, "rate of a surged"},
		{"at 1.25x is not", map[string]float64{"a": 12.5}, map[string]float64{"a": 10}, ""},
		{"tiny rates are ignored", map[string]float64{"a": 5}, map[string]float64{}, ""},
		{"unplaced model", map[string]float64{"b": 6}, map[string]float64{}, "rate of b surged"},
		{"first by name", map[string]float64{"z": 100, "c": 100}, map[string]float64{}, "rate of c surged"},
	} {
		require.Equal(t, tc.want, Surge(tc.short, tc.assigned), tc.name)
	}
	require.Equal(t, map[string]float64{"a": 20, "b": 7}, SurgeRates(map[string]float64{"a": 10, "b": 7}, map[string]float64{"a": 20, "b": 3}))
}

func TestWindowOpensWhereTheLastClosed(t *testing.T) {
	var w Window // opened at 0
	require.InDelta(t, 1.0, w.Close(time.Second), 1e-12)
	require.Zero(t, w.Close(time.Second), "no time has passed: the window stays open")
	require.InDelta(t, 0.5, w.Close(1500*time.Millisecond), 1e-12)
	require.Zero(t, w.Close(time.Second), "a clock that went back closes nothing")
	require.InDelta(t, 0.5, w.Close(2*time.Second), 1e-12, "the window opened at the last close, 1.5 s")
	late := OpenWindow(10 * time.Second)
	require.InDelta(t, 0.25, late.Close(10250*time.Millisecond), 1e-12)
}
