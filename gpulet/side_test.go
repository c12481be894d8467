package gpulet

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// amdahlProfile has L(b,p) = b·(1 + 100/p) at the measured sizes 20 and 50
// and a derived point at 100 that breaks the law, so a fit that used it
// would not give u = b.
func amdahlProfile(t *testing.T) *Profile {
	t.Helper()
	var pts []Point
	for _, b := range []int{1, 2} {
		for _, s := range []int{20, 50} {
			pts = append(pts, Point{Batch: b, Size: s, P50MS: float64(b) * (1 + 100/float64(s)), Util: Util{SM: math.NaN(), L2: float64(10 * b), DRAM: float64(s)}})
		}
		pts = append(pts, Point{Batch: b, Size: 100, P50MS: 100, Util: UnknownUtil(), Derived: true})
	}
	pts = append(pts, Point{Batch: 4, Size: 20, P50MS: 30})
	p, err := NewProfile("m", "dev", 10, pts)
	require.NoError(t, err)
	return p
}

func TestSerialMSUsesMeasuredPointsOnly(t *testing.T) {
	p := amdahlProfile(t)
	tests := []struct {
		b    int
		want float64
	}{{1, 1}, {2, 2}, {4, math.NaN()}, {3, math.NaN()}}
	for _, tc := range tests {
		got := p.SerialMS(tc.b)
		if math.IsNaN(tc.want) {
			require.True(t, math.IsNaN(got), "batch %d has fewer than two measured sizes", tc.b)
			continue
		}
		require.InDelta(t, tc.want, got, 1e-9, "batch %d", tc.b)
	}
}

func TestInterferenceSide(t *testing.T) {
	p := amdahlProfile(t)
	s, err := InterferenceSide(p, 2, 50)
	require.NoError(t, err)
	require.Equal(t, "m", s.Model)
	require.Equal(t, 2, s.Batch)
	require.Equal(t, 50, s.Size)
	require.InDelta(t, 6, s.SoloMS, 1e-9)
	require.InDelta(t, 3, s.Batch1MS, 1e-9)
	require.InDelta(t, 2, s.SerialMS, 1e-9)
	require.InDelta(t, 20, s.Util.L2, 1e-9)
	require.InDelta(t, 50, s.Util.DRAM, 1e-9)
	require.True(t, math.IsNaN(s.Util.SM))

	_, err = InterferenceSide(p, 8, 50)
	require.ErrorIs(t, err, ErrNoProfile)
	_, err = InterferenceSide(nil, 1, 50)
	require.ErrorIs(t, err, ErrNoProfile)
}
