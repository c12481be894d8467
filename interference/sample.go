package interference

import (
	"errors"
	"math"
)

// ErrBadSample is returned when a sample cannot be used for fitting or
// evaluation: a non-positive or non-finite latency, or a feature that is not a
// finite number.
var ErrBadSample = errors.New("bad sample")

// Util is the solo utilisation (percent of the whole GPU) of one model running
// alone on its gpu-let. A component that was not measured is NaN.
type Util struct {
	SM   float64 `json:"sm"`
	L2   float64 `json:"l2"`
	DRAM float64 `json:"dram"`
}

// Side describes one of the two models co-located on a GPU, each on its own
// gpu-let, as it behaves when it runs alone at that gpu-let's size.
type Side struct {
	Model  string  `json:"model"`
	Batch  int     `json:"batch"`
	Size   int     `json:"size"` // gpu-let size, percent of the GPU
	Util   Util    `json:"util"`
	SoloMS float64 `json:"solo_ms"` // solo latency of a batch at this size
	// Batch1MS is the solo latency of a batch of one at the same size (NaN
	// when unknown). Batch1MS/SoloMS is the share of the batch's time that
	// does not grow with the batch: launches, synchronisation and small
	// kernels.
	Batch1MS float64 `json:"batch1_ms"`
	// SerialMS is the part of the batch latency that more SMs do not
	// shorten: u in the fit L(b,p) = u + v/p of this batch over the profiled
	// sizes (NaN when unknown). That part is bound by what gpu-lets share —
	// memory bandwidth, L2, the launch path — where interference acts.
	SerialMS float64 `json:"serial_ms"`
}

// Sample is one observation of interference seen from one side: Self runs a
// batch while Other runs on the neighbouring gpu-let of the same GPU.
// CoLocatedMS is Self's measured latency while co-located (0 when the sample
// is only used for prediction). One measured pair yields two samples, one per
// side, that share the same Pair id; splits keep them together.
type Sample struct {
	Self        Side    `json:"self"`
	Other       Side    `json:"other"`
	CoLocatedMS float64 `json:"colocated_ms"`
	Pair        int     `json:"pair"`
}

// Factor is the measured slowdown of Self: co-located latency over solo
// latency.
func (s Sample) Factor() float64 { return s.CoLocatedMS / s.Self.SoloMS }

// PairSamples returns the two samples of one measured co-location: a's view
// (a slowed by b) and b's view (b slowed by a).
func PairSamples(a, b Side, aMS, bMS float64, pair int) [2]Sample {
	return [2]Sample{
		{Self: a, Other: b, CoLocatedMS: aMS, Pair: pair},
		{Self: b, Other: a, CoLocatedMS: bMS, Pair: pair},
	}
}

// measured reports whether a sample carries a usable measured factor.
func (s Sample) measured() bool {
	f := s.Factor()
	return s.Self.SoloMS > 0 && s.CoLocatedMS > 0 && !math.IsInf(f, 0) && !math.IsNaN(f)
}
