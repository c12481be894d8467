package profiler

import (
	"bufio"
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/stretchr/testify/require"
)

// rawIgniter reads the latency column of the embedded igniter-v100 table
// straight from its text: "point model batch size latency_ms l2 dram".
func rawIgniter(t *testing.T) map[string]map[[2]int]float64 {
	t.Helper()
	b, err := refset.Embedded(refset.SetIgniterV100)
	require.NoError(t, err)
	out := map[string]map[[2]int]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[0] != "point" {
			continue
		}
		batch, err1 := strconv.Atoi(f[2])
		size, err2 := strconv.Atoi(f[3])
		ms, err3 := strconv.ParseFloat(f[4], 64)
		require.NoError(t, err1)
		require.NoError(t, err2)
		require.NoError(t, err3)
		if out[f[1]] == nil {
			out[f[1]] = map[[2]int]float64{}
		}
		out[f[1]][[2]int{batch, size}] = ms
	}
	require.NoError(t, sc.Err())
	return out
}

// handCurvature is the signed curvature of the circle through three points,
// computed from the side lengths (Heron's area, R = abc/4K) and signed by
// whether the middle point lies above the chord of its neighbours (the
// curve bends down: positive).
func handCurvature(x0, y0, x1, y1, x2, y2 float64) float64 {
	a := math.Hypot(x1-x0, y1-y0)
	b := math.Hypot(x2-x1, y2-y1)
	c := math.Hypot(x2-x0, y2-y0)
	s := (a + b + c) / 2
	k := math.Sqrt(math.Max(s*(s-a)*(s-b)*(s-c), 0))
	kappa := 4 * k / (a * b * c)
	chordY := y0 + (y2-y0)*(x1-x0)/(x2-x0)
	if y1 < chordY {
		kappa = -kappa
	}
	return kappa
}

func TestKneesOnIgniterMatchCurvatureByHand(t *testing.T) {
	set, err := refset.Load(refset.SetIgniterV100)
	require.NoError(t, err)
	raw := rawIgniter(t)
	batches := []int{8, 32}
	rep, err := Knees(set, batches)
	require.NoError(t, err)
	require.Equal(t, []int{20, 40, 50, 60, 80, 100}, rep.Sizes)
	require.Len(t, rep.Models, 4)

	for _, mk := range rep.Models {
		model, ok := set.Model(mk.Model)
		require.True(t, ok)
		require.Len(t, mk.Batches, 2)
		for i, b := range batches {
			got := mk.Batches[i]
			require.Equal(t, b, got.Batch)
			// Rates from the raw table; iGniter measured no batch > 1 at
			// 100%, so that one point is the set's stated fill (fill.go).
			xs, ys := []float64{0}, []float64{0}
			top := 0.0
			var rates []float64
			for _, p := range rep.Sizes {
				l, ok := raw[mk.Model][[2]int{b, p}]
				if p == 100 {
					require.False(t, ok, "the raw table has no b=%d at 100%%", b)
					require.True(t, model.IsDerived(b, 100))
					l, ok = model.Profile.Latency(b, 100)
				}
				require.True(t, ok, "%s b=%d p=%d", mk.Model, b, p)
				r := 1000 * float64(b) / l
				rates = append(rates, r)
				top = math.Max(top, r)
			}
			for k, p := range rep.Sizes {
				xs = append(xs, float64(p)/100)
				ys = append(ys, rates[k]/top)
			}
			knee, best := rep.Sizes[len(rep.Sizes)-1], 0.0
			for k := range rep.Sizes[:len(rep.Sizes)-1] {
				kappa := handCurvature(xs[k], ys[k], xs[k+1], ys[k+1], xs[k+2], ys[k+2])
				pt := got.Curve.Points[k]
				require.Equal(t, rep.Sizes[k], pt.Size)
				require.InDelta(t, rates[k], pt.Rate, 1e-9*rates[k], "%s b=%d p=%d rate", mk.Model, b, pt.Size)
				require.InDelta(t, kappa, pt.Curvature, 1e-6*math.Max(1, math.Abs(kappa)), "%s b=%d p=%d curvature", mk.Model, b, pt.Size)
				if kappa > best {
					knee, best = rep.Sizes[k], kappa
				}
			}
			require.Equal(t, knee, got.Curve.Knee, "%s at batch %d", mk.Model, b)
			t.Logf("%s b=%d: knee %d%% (curvature %.3f)", mk.Model, b, knee, best)
		}
	}
}

func TestKneeAtBatch(t *testing.T) {
	// rate(p) = b/L: a model that stops speeding up beyond 40% has its knee
	// there; a straight L ∝ 1/p has no knee and takes the largest size.
	mk := func(lat func(p int) float64) *gpulet.Profile {
		var pts []gpulet.Point
		for _, p := range []int{20, 40, 60, 80, 100} {
			pts = append(pts, gpulet.Point{Batch: 4, Size: p, P50MS: lat(p), Util: gpulet.UnknownUtil()},
				gpulet.Point{Batch: 1, Size: p, P50MS: lat(p) / 2, Util: gpulet.UnknownUtil()})
		}
		p, err := gpulet.NewProfile("m", "d", 0, pts)
		require.NoError(t, err)
		return p
	}
	tests := []struct {
		name     string
		lat      func(p int) float64
		wantKnee int
	}{
		{"saturates at 40%", func(p int) float64 { return 1000 / float64(min(p, 40)) }, 40},
		{"linear in 1/p", func(p int) float64 { return 1000 / float64(p) }, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := KneeAtBatch(mk(tt.lat), 4)
			require.NoError(t, err)
			require.Equal(t, tt.wantKnee, c.Knee)
			require.Len(t, c.Points, 5)
			for _, pt := range c.Points {
				require.Equal(t, 4, pt.Batch)
				require.InDelta(t, 4000/tt.lat(pt.Size), pt.Rate, 1e-9)
			}
		})
	}
	_, err := KneeAtBatch(mk(tests[0].lat), 64)
	require.ErrorIs(t, err, gpulet.ErrNoProfile)
}
