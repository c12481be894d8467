package gpulet

import (
	"fmt"
	"math"
	"slices"
)

// Latency budget. A request may arrive just after its model's batch was
// taken, so it waits up to one duty cycle before its own batch starts and
// then runs for one batch: worst case = duty + L. A model alone on a
// gpu-let has duty = L at full load, so its batches must keep 2·L ≤ SLO (the
// papers' rule, DESIGN.md §4). With temporal sharing the duty cycle is the
// sum of the co-resident models' batch latencies (plus idle time) and every
// model keeps duty + L_m ≤ SLO_m (feasible.go). No tighter bound from the
// deferred scheduler is used: the scheduler only ever does better than one
// full duty cycle of waiting.

// AffordableRate is the most requests/s one model can be served at on a
// gpu-let of the given size when it has the gpu-let to itself: the largest
// b/L(b,size) (requests per ms × 1000) over the batches with 2·L(b,size) ≤
// sloMS. It also returns that batch; ok is false when not even b = 1 meets
// the budget or the size is not profiled.
func AffordableRate(p *Profile, sloMS float64, size int) (rate float64, batch int, ok bool) {
	if p == nil || !(sloMS > 0) {
		return 0, 0, false
	}
	for b := 1; b <= p.MaxBatch(size); b++ {
		l, found := p.Latency(b, size)
		if !found || 2*l > sloMS {
			continue
		}
		if r := 1000 * float64(b) / l; r > rate {
			rate, batch, ok = r, b, true
		}
	}
	return rate, batch, ok
}

// KneePoint is one size on a model's affordable-rate curve.
type KneePoint struct {
	Size  int     `json:"size"`
	Batch int     `json:"batch"` // the batch of AffordableRate, 0 when none
	Rate  float64 `json:"rate"`  // AffordableRate, 0 when none
	// Curvature is the signed curvature of the normalised curve at this
	// point (see Knee); positive where the curve bends down (diminishing
	// returns), 0 for the last size, which has no right neighbour.
	Curvature float64 `json:"curvature"`
}

// KneeCurve is the affordable-rate-vs-size curve of one model and its knee.
type KneeCurve struct {
	Points []KneePoint `json:"points"`
	// Knee is MAXEFFICIENTPARTITION's answer, the size with the largest
	// positive curvature; the largest size when no point bends down (the
	// curve is straight or still steepening, so more SMs keep paying off).
	Knee int `json:"knee"`
}

// Knee computes MAXEFFICIENTPARTITION (gpu-let paper section 4.3, Figure
// 8): the knee of the model's affordable rate against gpu-let size, where
// the curvature is largest. sizes are the gpu-let sizes to consider; none
// means the profile's own sizes.
//
// The paper does not say how the curvature is computed, so: both axes are
// normalised (size/100 and rate / the largest rate) so that the answer does
// not depend on units; the curve starts at the origin (a gpu-let of size 0
// serves nothing), which lets the smallest size be a knee; at every size
// with a neighbour on each side the curvature is the signed Menger
// curvature, the inverse radius of the circle through the point and its two
// neighbours, 4·area/(product of the three sides), positive when the curve
// turns clockwise (bends down). Menger's form needs no even spacing, which
// the sizes (20, 40, 50, 60, 80, 100) lack. Ties go to the smaller size.
func Knee(p *Profile, sloMS float64, sizes ...int) (KneeCurve, error) {
	if p == nil {
		return KneeCurve{}, fmt.Errorf("find knee: %w: nil profile", ErrNoProfile)
	}
	if len(sizes) == 0 {
		sizes = p.Sizes()
	}
	var pts []KneePoint
	for _, s := range sortedUnique(sizes) {
		r, b, _ := AffordableRate(p, sloMS, s)
		pts = append(pts, KneePoint{Size: s, Batch: b, Rate: r})
	}
	c, ok := kneeOf(pts)
	if !ok {
		return c, fmt.Errorf("find knee of %s: %w: no size meets the SLO of %.3g ms", p.Model, ErrNoProfile, sloMS)
	}
	return c, nil
}

// kneeOf fills the curvatures and the knee of an affordable-rate curve
// (sizes ascending); ok is false when no size affords any rate.
func kneeOf(pts []KneePoint) (KneeCurve, bool) {
	c := KneeCurve{Points: pts}
	maxRate := 0.0
	for _, pt := range pts {
		maxRate = max(maxRate, pt.Rate)
	}
	if len(pts) == 0 || maxRate == 0 {
		return c, false
	}
	xs := []float64{0}
	ys := []float64{0}
	for _, pt := range c.Points {
		xs = append(xs, float64(pt.Size)/100)
		ys = append(ys, pt.Rate/maxRate)
	}
	best, bestK := -1, 0.0
	for i := range c.Points {
		j := i + 1 // index in xs/ys
		if j+1 >= len(xs) {
			break
		}
		k := mengerCurvature(xs[j-1], ys[j-1], xs[j], ys[j], xs[j+1], ys[j+1])
		c.Points[i].Curvature = k
		if k > bestK {
			best, bestK = i, k
		}
	}
	if best < 0 {
		c.Knee = c.Points[len(c.Points)-1].Size
	} else {
		c.Knee = c.Points[best].Size
	}
	return c, true
}

// mengerCurvature is the signed inverse radius of the circle through three
// points, positive when (x0,y0)→(x1,y1)→(x2,y2) turns clockwise.
func mengerCurvature(x0, y0, x1, y1, x2, y2 float64) float64 {
	cross := (x1-x0)*(y2-y1) - (y1-y0)*(x2-x1) // twice the signed area
	a := math.Hypot(x1-x0, y1-y0)
	b := math.Hypot(x2-x1, y2-y1)
	d := math.Hypot(x2-x0, y2-y0)
	if a == 0 || b == 0 || d == 0 {
		return 0
	}
	return -2 * cross / (a * b * d)
}

func sortedUnique(xs []int) []int {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}
