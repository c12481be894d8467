package profiler

import (
	"math"
	"slices"
)

// Summary is what a set of latency samples of one operating point says.
type Summary struct {
	Samples int     `json:"samples"`
	P50MS   float64 `json:"p50_ms"`
	P99MS   float64 `json:"p99_ms"`
	MeanMS  float64 `json:"mean_ms"`
	// P50HalfWidth and P99HalfWidth are the half-widths of the
	// distribution-free confidence intervals of the median and of the 99th
	// percentile (see quantileCI), relative to the estimate.
	P50HalfWidth float64 `json:"p50_ci_half_width"`
	P99HalfWidth float64 `json:"p99_ci_half_width"`
}

// summarize computes the summary of samples with confidence level z (1.96
// for 95%). Quantiles are nearest-rank. samples is not modified.
func summarize(samples []float64, z float64) Summary {
	n := len(samples)
	if n == 0 {
		return Summary{P50MS: math.NaN(), P99MS: math.NaN(), MeanMS: math.NaN(), P50HalfWidth: math.Inf(1), P99HalfWidth: math.Inf(1)}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	out := Summary{Samples: n, P50MS: nearestRank(s, 0.5), P99MS: nearestRank(s, 0.99), MeanMS: sum / float64(n)}
	out.P50HalfWidth = relHalfWidth(s, 0.5, z, out.P50MS)
	out.P99HalfWidth = relHalfWidth(s, 0.99, z, out.P99MS)
	return out
}

// nearestRank is the q-quantile of sorted samples by the nearest-rank
// method: the ⌈q·n⌉-th smallest.
func nearestRank(sorted []float64, q float64) float64 {
	k := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(k, 1), len(sorted))-1]
}

// quantileCI returns the 1-based ranks [lo, hi] of the distribution-free
// confidence interval of the q-quantile of n samples: the number of samples
// below the true quantile is Binomial(n, q), approximated by a normal law,
// so lo = ⌊n·q − z·√(n·q·(1−q))⌋ and hi = ⌈1 + n·q + z·√(n·q·(1−q))⌉,
// clipped to 1..n. With few samples the upper rank is clipped to the
// largest sample, which only widens the interval.
func quantileCI(n int, q, z float64) (lo, hi int) {
	nq := float64(n) * q
	d := z * math.Sqrt(nq*(1-q))
	lo = int(math.Floor(nq - d))
	hi = int(math.Ceil(1 + nq + d))
	return min(max(lo, 1), n), min(max(hi, 1), n)
}

// relHalfWidth is half the width of the q-quantile's confidence interval,
// relative to est.
func relHalfWidth(sorted []float64, q, z, est float64) float64 {
	lo, hi := quantileCI(len(sorted), q, z)
	if !(est > 0) {
		return math.Inf(1)
	}
	return (sorted[hi-1] - sorted[lo-1]) / 2 / est
}
