package profiler

import (
	"errors"
	"fmt"
	"math"
)

// ErrTooFewPoints is returned when a fit needs more distinct batch sizes.
var ErrTooFewPoints = errors.New("too few points to fit")

// Fit is the least-squares line ℓ(b) = α·b + β through one partition
// size's p50 latencies (Symphony's and SHEPHERD's batch latency model),
// with how well it fits.
type Fit struct {
	Size    int     `json:"size"`
	AlphaMS float64 `json:"alpha_ms"` // ms per request in the batch
	BetaMS  float64 `json:"beta_ms"`  // ms per batch
	// R2 is the coefficient of determination (1 − SS_res/SS_tot); NaN
	// (null) when every latency is the same.
	R2 Num `json:"r2"`
	// MaxRelErr is the largest |fit − measured| / measured over the points.
	MaxRelErr float64 `json:"max_rel_err"`
	Points    int     `json:"points"`
}

// FitLine fits ℓ(b) = α·b + β to batches and latencies by ordinary least
// squares. It needs at least two distinct batch sizes.
func FitLine(size int, batches []int, latMS []float64) (Fit, error) {
	if len(batches) != len(latMS) {
		return Fit{}, fmt.Errorf("fit size %d: %d batches for %d latencies", size, len(batches), len(latMS))
	}
	n := float64(len(batches))
	if len(sortedUnique(batches)) < 2 {
		return Fit{}, fmt.Errorf("fit size %d: %w: need two distinct batch sizes, have %v", size, ErrTooFewPoints, batches)
	}
	var sx, sy float64
	for i, b := range batches {
		sx += float64(b)
		sy += latMS[i]
	}
	mx, my := sx/n, sy/n
	var sxx, sxy, syy float64
	for i, b := range batches {
		dx, dy := float64(b)-mx, latMS[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	f := Fit{Size: size, AlphaMS: sxy / sxx, Points: len(batches)}
	f.BetaMS = my - f.AlphaMS*mx
	var ssRes float64
	for i, b := range batches {
		pred := f.AlphaMS*float64(b) + f.BetaMS
		r := latMS[i] - pred
		ssRes += r * r
		if latMS[i] > 0 {
			f.MaxRelErr = max(f.MaxRelErr, math.Abs(r)/latMS[i])
		}
	}
	f.R2 = Num(math.NaN())
	if syy > 0 {
		f.R2 = Num(1 - ssRes/syy)
	}
	return f, nil
}

// fitPoints fits every size of the points that has at least two complete
// batch sizes.
func fitPoints(points []Point, sizes []int) []Fit {
	var out []Fit
	for _, p := range sizes {
		var bs []int
		var ls []float64
		for _, pt := range points {
			if pt.Size == p && pt.Complete {
				bs = append(bs, pt.Batch)
				ls = append(ls, pt.P50MS)
			}
		}
		if f, err := FitLine(p, bs, ls); err == nil {
			out = append(out, f)
		}
	}
	return out
}
