package profiler

import (
	"fmt"
	"time"
)

// StopRule says how many runs an operating point gets. After Warmup
// discarded runs, runs are sampled until
//
//   - at least MinSamples were taken, and
//   - the 95% distribution-free confidence interval of the median (see
//     quantileCI; confidence Z) has a half-width of at most MedianCI of the
//     median, and
//   - the same interval of the 99th percentile has a half-width of at most
//     P99CI of the 99th percentile (with fewer than about 400 samples its
//     upper end is the largest sample, so a single outlier keeps the point
//     sampling: the p99 of few samples is not trusted),
//
// which marks the point stable; or until a cap: MaxSamples samples, or
// MaxTime of sampling once at least CapMinSamples were taken. A capped point
// is complete but not stable, and says so.
type StopRule struct {
	Warmup        int
	MinSamples    int
	MaxSamples    int
	MaxTime       time.Duration
	CapMinSamples int
	MedianCI      float64
	P99CI         float64
	Z             float64
}

// DefaultStopRule is the rule `gpuletd profile` uses: 3 warm-up runs, at
// least 20 samples, median within ±2% and p99 within ±10% at 95%
// confidence, at most 1000 samples or 30 s per point (5 samples at least).
func DefaultStopRule() StopRule {
	return StopRule{
		Warmup: 3, MinSamples: 20, MaxSamples: 1000, MaxTime: 30 * time.Second, CapMinSamples: 5,
		MedianCI: 0.02, P99CI: 0.10, Z: 1.96,
	}
}

// withDefaults fills zero fields from DefaultStopRule.
func (r StopRule) withDefaults() StopRule {
	d := DefaultStopRule()
	if r.Warmup == 0 {
		r.Warmup = d.Warmup
	}
	if r.Warmup < 0 {
		r.Warmup = 0
	}
	if r.MinSamples <= 0 {
		r.MinSamples = d.MinSamples
	}
	if r.MaxSamples <= 0 {
		r.MaxSamples = d.MaxSamples
	}
	if r.MaxTime <= 0 {
		r.MaxTime = d.MaxTime
	}
	if r.CapMinSamples <= 0 {
		r.CapMinSamples = d.CapMinSamples
	}
	if r.MedianCI <= 0 {
		r.MedianCI = d.MedianCI
	}
	if r.P99CI <= 0 {
		r.P99CI = d.P99CI
	}
	if r.Z <= 0 {
		r.Z = d.Z
	}
	r.MaxSamples = max(r.MaxSamples, r.MinSamples)
	r.CapMinSamples = min(r.CapMinSamples, r.MinSamples)
	return r
}

// String states the rule.
func (r StopRule) String() string {
	return fmt.Sprintf("%d warm-up runs; ≥%d samples until the median is within ±%.3g%% and the p99 within ±%.3g%% (z=%.3g), or %d samples, or %s with ≥%d samples",
		r.Warmup, r.MinSamples, 100*r.MedianCI, 100*r.P99CI, r.Z, r.MaxSamples, r.MaxTime, r.CapMinSamples)
}

// Verdict is what the rule says about the samples so far.
type Verdict int

// Verdicts.
const (
	// Continue: take another sample.
	Continue Verdict = iota
	// Stable: the confidence intervals are narrow enough.
	Stable
	// Capped: a cap on samples or time was reached first.
	Capped
)

// Judge applies the rule to the samples taken during elapsed.
func (r StopRule) Judge(samples []float64, elapsed time.Duration) Verdict {
	n := len(samples)
	if n >= r.MinSamples {
		s := summarize(samples, r.Z)
		if s.P50HalfWidth <= r.MedianCI && s.P99HalfWidth <= r.P99CI {
			return Stable
		}
	}
	if n >= r.MaxSamples || (elapsed >= r.MaxTime && n >= r.CapMinSamples) {
		return Capped
	}
	return Continue
}
