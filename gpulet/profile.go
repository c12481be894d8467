package gpulet

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// ErrNoProfile is returned when a model has no latency profile for a device type
// or when an operating point lies outside what was profiled.
var ErrNoProfile = errors.New("no profile")

// Util is the solo utilisation of a GPU (or of a gpu-let's share of it) while a
// model runs, in percent. A value that could not be measured is NaN, never 0.
type Util struct {
	SM   float64 `json:"sm"`
	L2   float64 `json:"l2"`
	DRAM float64 `json:"dram"`
}

// UnknownUtil is a Util with every value unknown.
func UnknownUtil() Util { return Util{SM: math.NaN(), L2: math.NaN(), DRAM: math.NaN()} }

// Point is one measured operating point of a model: batch size b on a gpu-let of
// size p percent of its device.
type Point struct {
	Batch int     `json:"batch"`
	Size  int     `json:"size"`
	P50MS float64 `json:"p50_ms"`
	// P99MS is the 99th percentile latency; 0 means unknown and reads as P50MS.
	P99MS float64 `json:"p99_ms"`
	Util  Util    `json:"util"`
	// Derived marks a point that was filled by a stated method (for example
	// extrapolated to a size nobody measured) rather than measured. Lookups
	// use it like any other point; fits that must rest on measurements only
	// (SerialMS) skip it.
	Derived bool `json:"derived,omitempty"`
	// Procs is how many processes of the model run the batch together on
	// the gpu-let, each a share of it (MPS inside a MIG instance: Batch is
	// their batches added up, P50MS the time they take side by side); 0
	// means 1. Only reference sets measured that way have it.
	Procs int `json:"procs,omitempty"`
}

// Profile is a model's latency curve L(b,p) on one device type: the measured
// points, with lookups that interpolate between them. A Profile is immutable
// once built and safe for concurrent use.
type Profile struct {
	Model      string
	DeviceType string
	// MemoryMB is the device memory one loaded instance of the model needs
	// (weights, workspace and activations at its largest profiled batch).
	MemoryMB float64

	sizes  []int           // profiled sizes, ascending
	rows   map[int][]Point // per size, points ascending by batch
	serial map[int]float64 // per batch, u of L(b,p) = u + v/p over measured sizes
}

// NewProfile builds a Profile from measured points. Points must have a batch
// ≥ 1, a size in 1..100 and a positive finite latency; a repeated (b,p) is an
// error.
func NewProfile(model, deviceType string, memoryMB float64, points []Point) (*Profile, error) {
	if len(points) == 0 {
		return nil, fmt.Errorf("build profile %s on %s: %w: no points", model, deviceType, ErrNoProfile)
	}
	p := &Profile{Model: model, DeviceType: deviceType, MemoryMB: memoryMB, rows: map[int][]Point{}}
	seen := map[[2]int]bool{}
	for _, pt := range points {
		switch {
		case pt.Batch < 1:
			return nil, fmt.Errorf("build profile %s: batch %d: must be at least 1", model, pt.Batch)
		case pt.Size < 1 || pt.Size > 100:
			return nil, fmt.Errorf("build profile %s: size %d: must be in 1..100", model, pt.Size)
		case !(pt.P50MS > 0) || math.IsInf(pt.P50MS, 0):
			return nil, fmt.Errorf("build profile %s: latency %v at b=%d p=%d: must be positive and finite", model, pt.P50MS, pt.Batch, pt.Size)
		case pt.Procs < 0:
			return nil, fmt.Errorf("build profile %s: %d processes at b=%d p=%d: must be ≥ 0", model, pt.Procs, pt.Batch, pt.Size)
		case pt.P99MS < 0 || math.IsNaN(pt.P99MS) || math.IsInf(pt.P99MS, 0):
			return nil, fmt.Errorf("build profile %s: p99 %v at b=%d p=%d: must be 0 (unknown) or positive", model, pt.P99MS, pt.Batch, pt.Size)
		}
		k := [2]int{pt.Batch, pt.Size}
		if seen[k] {
			return nil, fmt.Errorf("build profile %s: point b=%d p=%d given twice", model, pt.Batch, pt.Size)
		}
		seen[k] = true
		if pt.P99MS == 0 {
			pt.P99MS = pt.P50MS
		}
		p.rows[pt.Size] = append(p.rows[pt.Size], pt)
	}
	for s, row := range p.rows {
		sort.Slice(row, func(i, j int) bool { return row[i].Batch < row[j].Batch })
		p.sizes = append(p.sizes, s)
	}
	sort.Ints(p.sizes)
	p.fitSerial()
	return p, nil
}

// Sizes returns the profiled partition sizes, ascending.
func (p *Profile) Sizes() []int { return slices.Clone(p.sizes) }

// Points returns every measured point, ascending by size then batch.
func (p *Profile) Points() []Point {
	var out []Point
	for _, s := range p.sizes {
		out = append(out, p.rows[s]...)
	}
	return out
}

// MaxBatch returns the largest batch size profiled at size p, or 0 when the size
// has no row (an unprofiled size between two profiled ones takes the smaller of
// their maxima).
func (p *Profile) MaxBatch(size int) int {
	if row, ok := p.rows[size]; ok {
		return row[len(row)-1].Batch
	}
	lo, hi, ok := p.bracket(size)
	if !ok {
		return 0
	}
	return min(p.MaxBatch(lo), p.MaxBatch(hi))
}

// Latency returns the p50 latency in ms of a batch of b on a gpu-let of the given
// size. Between profiled batch sizes it interpolates linearly in b; between
// profiled sizes it interpolates linearly in 1/p (work spread over p% of the SMs
// takes time proportional to 1/p when nothing else limits it). It never
// extrapolates: outside the profiled range ok is false.
func (p *Profile) Latency(b, size int) (ms float64, ok bool) {
	return p.lookup(b, size, func(pt Point) float64 { return pt.P50MS })
}

// P99 is Latency for the 99th percentile.
func (p *Profile) P99(b, size int) (ms float64, ok bool) {
	return p.lookup(b, size, func(pt Point) float64 { return pt.P99MS })
}

// Utilisation returns the solo utilisation at (b,p), interpolated as Latency is.
// Unknown components stay NaN.
func (p *Profile) Utilisation(b, size int) (Util, bool) {
	sm, ok := p.lookup(b, size, func(pt Point) float64 { return pt.Util.SM })
	if !ok {
		return UnknownUtil(), false
	}
	l2, _ := p.lookup(b, size, func(pt Point) float64 { return pt.Util.L2 })
	dram, _ := p.lookup(b, size, func(pt Point) float64 { return pt.Util.DRAM })
	return Util{SM: sm, L2: l2, DRAM: dram}, true
}

// Procs returns how many processes run a batch of b at size: those of the
// first point at or above b (the batch is then split among them, some
// taking fewer), 1 when the point has none or the size has no row.
func (p *Profile) Procs(b, size int) int {
	row := p.rows[size]
	i := sort.Search(len(row), func(i int) bool { return row[i].Batch >= b })
	if i == len(row) {
		return 1
	}
	return max(row[i].Procs, 1)
}

// LargestBatchWithin returns the largest batch b (1 ≤ b ≤ MaxBatch(size)) whose
// latency at this size is at most budgetMS, and that latency; ok is false when
// not even b = 1 fits.
func (p *Profile) LargestBatchWithin(size int, budgetMS float64) (b int, ms float64, ok bool) {
	maxB := p.MaxBatch(size)
	for cand := maxB; cand >= 1; cand-- {
		if l, found := p.Latency(cand, size); found && l <= budgetMS {
			return cand, l, true
		}
	}
	return 0, 0, false
}

func (p *Profile) lookup(b, size int, val func(Point) float64) (float64, bool) {
	if row, ok := p.rows[size]; ok {
		return interpBatch(row, b, val)
	}
	lo, hi, ok := p.bracket(size)
	if !ok {
		return 0, false
	}
	vlo, ok1 := interpBatch(p.rows[lo], b, val)
	vhi, ok2 := interpBatch(p.rows[hi], b, val)
	if !ok1 || !ok2 {
		return 0, false
	}
	w := (1/float64(size) - 1/float64(lo)) / (1/float64(hi) - 1/float64(lo))
	return vlo + w*(vhi-vlo), true
}

// bracket finds the profiled sizes just below and above an unprofiled size.
func (p *Profile) bracket(size int) (lo, hi int, ok bool) {
	i := sort.SearchInts(p.sizes, size)
	if i == 0 || i == len(p.sizes) {
		return 0, 0, false
	}
	return p.sizes[i-1], p.sizes[i], true
}

func interpBatch(row []Point, b int, val func(Point) float64) (float64, bool) {
	i := sort.Search(len(row), func(i int) bool { return row[i].Batch >= b })
	if i == len(row) {
		return 0, false
	}
	if row[i].Batch == b {
		return val(row[i]), true
	}
	if i == 0 {
		return 0, false
	}
	a, c := row[i-1], row[i]
	w := float64(b-a.Batch) / float64(c.Batch-a.Batch)
	return val(a) + w*(val(c)-val(a)), true
}
