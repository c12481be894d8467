package interference

import (
	"fmt"
	"math"
	"slices"
)

// Quantiles are quantiles of relative errors, as fractions (0.05 = 5%).
type Quantiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P95 float64 `json:"p95"`
}

// Errors are relative latency errors |predicted − measured| / measured.
// Evaluate returns them sorted ascending; the methods sort a copy when they
// are not.
type Errors []float64

func (e Errors) sorted() Errors {
	if slices.IsSorted(e) {
		return e
	}
	c := slices.Clone(e)
	slices.Sort(c)
	return c
}

// CDFPoint is one step of an empirical CDF: Fraction of the errors are at
// most Error.
type CDFPoint struct {
	Error    float64 `json:"error"`
	Fraction float64 `json:"fraction"`
}

// Evaluate predicts the co-located latency of every test sample (solo
// latency × predicted factor) and returns the relative errors against the
// measured co-located latency, sorted.
func Evaluate(m *Model, test []Sample) (Errors, error) {
	errs := make(Errors, 0, len(test))
	for i, s := range test {
		if !s.measured() {
			return nil, fmt.Errorf("evaluate %s: sample %d: %w: solo %v ms, co-located %v ms", m.Name, i, ErrBadSample, s.Self.SoloMS, s.CoLocatedMS)
		}
		f, err := m.PredictChecked(s)
		if err != nil {
			return nil, fmt.Errorf("evaluate %s: sample %d: %w", m.Name, i, err)
		}
		errs = append(errs, math.Abs(s.Self.SoloMS*f-s.CoLocatedMS)/s.CoLocatedMS)
	}
	slices.Sort(errs)
	return errs, nil
}

// Quantile returns the nearest-rank q-quantile: the smallest error e such
// that at least a fraction q of the errors are ≤ e (the ⌈q·n⌉-th smallest).
// It is NaN for no errors.
func (e Errors) Quantile(q float64) float64 {
	if len(e) == 0 {
		return math.NaN()
	}
	e = e.sorted()
	i := int(math.Ceil(q*float64(len(e))-1e-9)) - 1
	return e[min(max(i, 0), len(e)-1)]
}

// Quantiles returns the p50, p90 and p95 nearest-rank quantiles.
func (e Errors) Quantiles() Quantiles {
	return Quantiles{P50: e.Quantile(0.50), P90: e.Quantile(0.90), P95: e.Quantile(0.95)}
}

// CDF returns the empirical CDF, one point per distinct error.
func (e Errors) CDF() []CDFPoint {
	var out []CDFPoint
	e = e.sorted()
	for i, v := range e {
		if i+1 < len(e) && e[i+1] == v {
			continue
		}
		out = append(out, CDFPoint{Error: v, Fraction: float64(i+1) / float64(len(e))})
	}
	return out
}
