package gpulet

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// oneBatchProfile has only batch 1, so AffordableRate(p) = 1000/L(1,p).
func oneBatchProfile(t *testing.T, lat map[int]float64) *Profile {
	t.Helper()
	var pts []Point
	for s, l := range lat {
		pts = append(pts, Point{Batch: 1, Size: s, P50MS: l})
	}
	p, err := NewProfile("m", "dev", 0, pts)
	require.NoError(t, err)
	return p
}

func TestKneeByHand(t *testing.T) {
	// Rates 400, 700, 900, 1000 req/s at 25, 50, 75, 100%: normalised
	// points (0,0), (.25,.4), (.5,.7), (.75,.9), (1,1). At (.5,.7): the
	// cross product of (.25,.3) and (.25,.2) is .25·.2 − .3·.25 = −.025;
	// the sides are √(.25²+.3²) = .39051, √(.25²+.2²) = .32016 and
	// √(.5²+.5²) = .70711; curvature = 2·.025/(.39051·.32016·.70711) =
	// .56557. Likewise .31554 at 25% and .99472 at 75%, the knee.
	p := oneBatchProfile(t, map[int]float64{25: 2.5, 50: 1000.0 / 700, 75: 1000.0 / 900, 100: 1})
	c, err := Knee(p, 10)
	require.NoError(t, err)
	require.Equal(t, 75, c.Knee)
	want := []struct {
		size int
		rate float64
		k    float64
	}{{25, 400, 0.31554}, {50, 700, 0.56557}, {75, 900, 0.99472}, {100, 1000, 0}}
	require.Len(t, c.Points, len(want))
	for i, w := range want {
		require.Equal(t, w.size, c.Points[i].Size)
		require.Equal(t, 1, c.Points[i].Batch)
		require.InDelta(t, w.rate, c.Points[i].Rate, 1e-9)
		require.InDelta(t, w.k, c.Points[i].Curvature, 1e-5, "size %d", w.size)
	}
}

func TestKneeShapes(t *testing.T) {
	tests := []struct {
		name string
		lat  map[int]float64 // L(1,p)
		slo  float64
		want int
	}{
		// Rate proportional to size: a straight line, nothing bends down,
		// more SMs keep paying: the largest size.
		{"linear", map[int]float64{25: 4, 50: 2, 75: 4.0 / 3, 100: 1}, 10, 100},
		// Early saturation: 900 of 1000 at 25% already: knee at 25.
		{"saturates early", map[int]float64{25: 1000.0 / 900, 50: 1000.0 / 950, 75: 1000.0 / 980, 100: 1}, 10, 25},
		// The SLO rules out 25% (2·L = 12 > 10): that point has rate 0 and
		// bends up, so it cannot be the knee.
		{"smallest infeasible", map[int]float64{25: 6, 50: 1000.0 / 700, 75: 1000.0 / 900, 100: 1}, 10, 50},
		// Only the given sizes are considered.
		{"one size", map[int]float64{100: 1}, 10, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Knee(oneBatchProfile(t, tc.lat), tc.slo)
			require.NoError(t, err)
			require.Equal(t, tc.want, c.Knee)
		})
	}
}

func TestKneeErrors(t *testing.T) {
	_, err := Knee(nil, 10)
	require.ErrorIs(t, err, ErrNoProfile)
	p := oneBatchProfile(t, map[int]float64{50: 20, 100: 10})
	_, err = Knee(p, 10)
	require.ErrorIs(t, err, ErrNoProfile, "no size meets the SLO")
	c, err := Knee(p, 40, 50)
	require.NoError(t, err)
	require.Equal(t, 50, c.Knee, "sizes restrict the curve")
}

func TestAffordableRate(t *testing.T) {
	// L(b,100) = 2 + b: 2·L ≤ 20 allows b ≤ 8 at 10 ms: 800 req/s.
	p := linearProfile(t, "m", "dev", 0, 1, 2, 16, 100)
	r, b, ok := AffordableRate(p, 20, 100)
	require.True(t, ok)
	require.Equal(t, 8, b)
	require.InDelta(t, 800, r, 1e-9)
	_, _, ok = AffordableRate(p, 5, 100)
	require.False(t, ok, "2·L(1) = 6 > 5")
	_, _, ok = AffordableRate(p, 20, 30)
	require.False(t, ok, "size not profiled")
	_, _, ok = AffordableRate(nil, 20, 100)
	require.False(t, ok)
}

func TestPaperSLO(t *testing.T) {
	p := linearProfile(t, "m", "dev", 0, 1, 2, 32, 50, 100)
	slo, ok := PaperSLO(p)
	require.True(t, ok)
	require.InDelta(t, 2*(2+32), slo, 1e-9)
	_, ok = PaperSLO(linearProfile(t, "m", "dev", 0, 1, 2, 16, 100))
	require.False(t, ok, "no batch 32 at 100%")
	_, ok = PaperSLO(nil)
	require.False(t, ok)
}
