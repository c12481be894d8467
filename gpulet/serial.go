package gpulet

import "math"

// SerialMS returns the part of a batch of b's latency that a larger gpu-let
// does not shorten: u in the least-squares fit L(b,p) = u + v/p over the
// measured (not Derived) sizes of batch b. It is NaN when fewer than two
// sizes of that batch were measured.
func (p *Profile) SerialMS(b int) float64 {
	if v, ok := p.serial[b]; ok {
		return v
	}
	return math.NaN()
}

// fitSerial computes SerialMS for every batch once, when the profile is built.
func (p *Profile) fitSerial() {
	type acc struct{ n, sx, sy, sxx, sxy float64 }
	sums := map[int]*acc{}
	for _, s := range p.sizes {
		for _, pt := range p.rows[s] {
			if pt.Derived {
				continue
			}
			a := sums[pt.Batch]
			if a == nil {
				a = &acc{}
				sums[pt.Batch] = a
			}
			x := 1 / float64(pt.Size)
			a.n++
			a.sx += x
			a.sy += pt.P50MS
			a.sxx += x * x
			a.sxy += x * pt.P50MS
		}
	}
	p.serial = map[int]float64{}
	for b, a := range sums {
		if a.n < 2 {
			continue
		}
		v := (a.n*a.sxy - a.sx*a.sy) / (a.n*a.sxx - a.sx*a.sx)
		p.serial[b] = (a.sy - v*a.sx) / a.n
	}
}
