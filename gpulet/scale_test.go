package gpulet

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLargestScale(t *testing.T) {
	below := func(limit float64) func(float64) (bool, error) {
		return func(s float64) (bool, error) { return s <= limit, nil }
	}
	for _, tc := range []struct {
		name  string
		limit float64
		want  float64
	}{
		{"above one", 3.7, 3.7},
		{"below one", 0.25, 0.25},
		{"a power of two", 4, 4},
		{"not even a thousandth", 1e-4, 0},
		{"at the cap", 1e9, MaxScale},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LargestScale(below(tc.limit), 1e-3)
			require.NoError(t, err)
			require.LessOrEqual(t, got, tc.limit, "a factor that fits")
			require.InDelta(t, tc.want, got, 1e-3*max(tc.want, 1e-3))
		})
	}
	broken := errors.New("planner failed")
	calls := 0
	_, err := LargestScale(func(s float64) (bool, error) {
		calls++
		if s > 2 {
			return false, broken
		}
		return true, nil
	}, 1e-3)
	require.ErrorIs(t, err, broken)
	require.Equal(t, 3, calls, "the first error ends the search")
}
