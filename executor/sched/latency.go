package sched

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// LatencyPoint is one profiled batch size and its latency in milliseconds.
type LatencyPoint struct {
	Batch int
	MS    float64
}

// Latency is a model's batch latency ℓ(b) on one gpu-let for b = 1..MaxBatch,
// precomputed so that a lookup is an index. It is immutable; copies share the
// table. The zero Latency has MaxBatch 0 and serves nothing.
type Latency struct {
	ns []time.Duration // ns[b] = ℓ(b); ns[0] = 0
}

// NewLatency builds ℓ(b) = interp(b)·factor + overhead for b = 1..maxBatch from
// latencies measured at some batch sizes:
//
//   - between two profiled sizes interp is linear in b;
//   - below the smallest profiled size it is that size's latency (an upper
//     bound, so the scheduler never plans on a batch finishing earlier than it
//     can);
//   - beyond the largest profiled size there is no value: maxBatch may not
//     exceed it, and 0 means the largest profiled size.
//
// factor is the plan's interference factor (≥ 1 normally, > 0 required) and
// overhead the measured dispatch cost at batch b (nil: none). Values are
// rounded to the nanosecond, and a measured dip (ℓ(b+1) < ℓ(b), noise) is
// raised to the running maximum so that ℓ never decreases, which GETBATCH
// relies on.
func NewLatency(points []LatencyPoint, factor float64, overhead Overhead, maxBatch int) (Latency, error) {
	if len(points) == 0 {
		return Latency{}, fmt.Errorf("build latency: %w: no points", ErrBadLatency)
	}
	if !(factor > 0) || math.IsInf(factor, 0) {
		return Latency{}, fmt.Errorf("build latency: %w: interference factor %v must be positive and finite", ErrBadLatency, factor)
	}
	overhead, err := overhead.sorted()
	if err != nil {
		return Latency{}, fmt.Errorf("build latency: %w", err)
	}
	pts := slices.Clone(points)
	slices.SortFunc(pts, func(a, b LatencyPoint) int { return a.Batch - b.Batch })
	for i, p := range pts {
		if p.Batch < 1 {
			return Latency{}, fmt.Errorf("build latency: %w: batch %d must be at least 1", ErrBadLatency, p.Batch)
		}
		if !(p.MS > 0) || math.IsInf(p.MS, 0) {
			return Latency{}, fmt.Errorf("build latency: %w: latency %v ms at batch %d must be positive and finite", ErrBadLatency, p.MS, p.Batch)
		}
		if i > 0 && pts[i-1].Batch == p.Batch {
			return Latency{}, fmt.Errorf("build latency: %w: batch %d given twice", ErrBadLatency, p.Batch)
		}
	}
	largest := pts[len(pts)-1].Batch
	switch {
	case maxBatch == 0:
		maxBatch = largest
	case maxBatch < 0 || maxBatch > largest:
		return Latency{}, fmt.Errorf("build latency: %w: max batch %d outside 1..%d (the largest profiled)", ErrBadLatency, maxBatch, largest)
	}
	ns := make([]time.Duration, maxBatch+1)
	j := 0 // pts[j] is the first point with Batch ≥ b
	for b := 1; b <= maxBatch; b++ {
		for pts[j].Batch < b {
			j++
		}
		ms := pts[j].MS
		if pts[j].Batch > b && j > 0 {
			lo, hi := pts[j-1], pts[j]
			ms = lo.MS + (hi.MS-lo.MS)*float64(b-lo.Batch)/float64(hi.Batch-lo.Batch)
		}
		v := time.Duration(math.Round(ms*factor*float64(time.Millisecond))) + overhead.At(b)
		if v <= 0 {
			v = 1
		}
		ns[b] = max(v, ns[b-1])
	}
	return Latency{ns: ns}, nil
}

// Overhead is an engine's dispatch cost outside the model (joining a
// batch's rows, padding it, splitting its outputs), measured at some batch
// sizes: LatencyPoint.MS at LatencyPoint.Batch. It grows with the batch's
// bytes: on the CPU, lenet5's is 1–9 µs at a batch of one and 20–120 µs at
// 32, resnet18's 10–25 µs and 1–50 ms (a single warm-up run each), so the
// largest alone, added to every batch, tripled lenet5's ℓ(1).
type Overhead []LatencyPoint

// At is the overhead at batch b: interpolated between measured sizes, the
// smallest's below it and the largest's above it; 0 without points. The
// points may come in any order.
func (o Overhead) At(b int) time.Duration {
	if len(o) == 0 {
		return 0
	}
	var lo, hi *LatencyPoint // the nearest sizes below b, and at or above it
	for i := range o {
		p := &o[i]
		switch {
		case p.Batch >= b && (hi == nil || p.Batch < hi.Batch):
			hi = p
		case p.Batch < b && (lo == nil || p.Batch > lo.Batch):
			lo = p
		}
	}
	var ms float64
	switch {
	case hi == nil:
		ms = lo.MS
	case lo == nil || hi.Batch == b:
		ms = hi.MS
	default:
		ms = lo.MS + (hi.MS-lo.MS)*float64(b-lo.Batch)/float64(hi.Batch-lo.Batch)
	}
	return time.Duration(math.Round(ms * float64(time.Millisecond)))
}

// ConstantOverhead is the same overhead d at every batch size.
func ConstantOverhead(d time.Duration) Overhead {
	return Overhead{{Batch: 1, MS: float64(d) / float64(time.Millisecond)}}
}

// sorted returns a checked copy of o in ascending batch order.
func (o Overhead) sorted() (Overhead, error) {
	c := slices.Clone(o)
	slices.SortFunc(c, func(a, b LatencyPoint) int { return a.Batch - b.Batch })
	for i, p := range c {
		switch {
		case p.Batch < 1:
			return nil, fmt.Errorf("%w: overhead at batch %d: batch must be at least 1", ErrBadLatency, p.Batch)
		case p.MS < 0 || math.IsNaN(p.MS) || math.IsInf(p.MS, 0):
			return nil, fmt.Errorf("%w: overhead %v ms at batch %d must be finite and not negative", ErrBadLatency, p.MS, p.Batch)
		case i > 0 && c[i-1].Batch == p.Batch:
			return nil, fmt.Errorf("%w: overhead at batch %d given twice", ErrBadLatency, p.Batch)
		}
	}
	return c, nil
}

// LinearLatency is ℓ(b) = alpha·b + beta for b = 1..maxBatch, the linear
// profile of Symphony §2.1 and SHEPHERD Eq. 1.
func LinearLatency(alpha, beta time.Duration, maxBatch int) (Latency, error) {
	if alpha < 0 || beta < 0 || alpha+beta <= 0 || maxBatch < 1 {
		return Latency{}, fmt.Errorf("build linear latency α=%v β=%v max %d: %w", alpha, beta, maxBatch, ErrBadLatency)
	}
	ns := make([]time.Duration, maxBatch+1)
	for b := 1; b <= maxBatch; b++ {
		ns[b] = alpha*time.Duration(b) + beta
	}
	return Latency{ns: ns}, nil
}

// Truncated returns ℓ limited to batches of at most maxB (maxB at least 1,
// at most MaxBatch).
func (l Latency) Truncated(maxB int) Latency {
	maxB = min(max(maxB, 1), l.MaxBatch())
	return Latency{ns: l.ns[:maxB+1]}
}

// Padded returns ℓ as an engine that runs a batch of b at pad(b) ≥ b rows
// costs: ℓ'(b) = ℓ(pad(b)), pad(b) capped at MaxBatch. pad must not
// decrease, so neither does ℓ'.
func (l Latency) Padded(pad func(b int) int) Latency {
	ns := make([]time.Duration, len(l.ns))
	for b := 1; b < len(ns); b++ {
		ns[b] = l.ns[min(max(pad(b), b), len(l.ns)-1)]
	}
	return Latency{ns: ns}
}

// MaxBatch is the largest batch size ℓ is defined for (0 for the zero value).
func (l Latency) MaxBatch() int { return max(len(l.ns)-1, 0) }

// At returns ℓ(b) for 1 ≤ b ≤ MaxBatch; it panics outside that range.
func (l Latency) At(b int) time.Duration { return l.ns[b] }

// Largest returns the largest b in 1..limit (limit capped at MaxBatch) with
// ℓ(b) ≤ budget, or 0 when not even ℓ(1) fits.
func (l Latency) Largest(budget time.Duration, limit int) int {
	hi := min(limit, len(l.ns)-1)
	if hi < 1 {
		return 0
	}
	if l.ns[hi] <= budget { // the common case: the whole queue fits
		return hi
	}
	if l.ns[1] > budget {
		return 0
	}
	lo := 1 // invariant: ℓ(lo) ≤ budget < ℓ(hi)
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if l.ns[mid] <= budget {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
