package interference

import (
	"encoding/json"
	"fmt"
	"math"
)

// Model is a fitted interference model. It serialises to JSON as its spec
// (name, features, target, ridge), one coefficient per feature in raw feature
// units, its clamp range and its fit statistics, so a store can keep one per
// device type and load it back with json.Unmarshal.
type Model struct {
	Spec
	Coefficients []float64 `json:"coefficients"`
	// MinFactor and MaxFactor bound every prediction. MinFactor is 1 (a
	// neighbour never speeds a model up) unless the training data measured
	// factors below 1, in which case it is the smallest measured factor;
	// MaxFactor is 1 + twice the largest measured slowdown (f_max − 1).
	MinFactor float64  `json:"min_factor"`
	MaxFactor float64  `json:"max_factor"`
	Stats     FitStats `json:"stats"`

	fz *featurizer
}

// FitStats describes how well a model fits: r² and RMSE of the predicted
// factor on its own training samples, their count, and (when the model was
// chosen by Train) its held-out relative latency errors per split.
type FitStats struct {
	Samples int     `json:"samples"`
	R2      float64 `json:"r2"`
	RMSE    float64 `json:"rmse"`
	// HeldOut maps a split name ("lomo", "random") to the quantiles of the
	// relative latency error on held-out samples.
	HeldOut map[string]Quantiles `json:"held_out,omitempty"`
}

// Predict returns the predicted slowdown factor of s.Self co-located with
// s.Other, clamped to [MinFactor, MaxFactor]. It never returns NaN or Inf: a
// sample whose features are not finite (for example an unknown utilisation)
// gets MaxFactor, the conservative answer; callers that must know use
// PredictChecked.
func (m *Model) Predict(s Sample) float64 {
	f, err := m.PredictChecked(s)
	if err != nil {
		return m.MaxFactor
	}
	return f
}

// PredictChecked is Predict that reports non-finite features as an error
// (wrapping ErrBadSample) instead of answering MaxFactor.
func (m *Model) PredictChecked(s Sample) (float64, error) {
	fz := m.fz
	if fz == nil {
		// A Model built by hand rather than by Fit or json.Unmarshal.
		var err error
		if fz, err = newFeaturizer(m.Features); err != nil {
			return 0, fmt.Errorf("predict %s: %w", m.Name, err)
		}
	}
	if len(fz.fs) != len(m.Coefficients) {
		return 0, fmt.Errorf("predict %s: %w: %d coefficients for %d features", m.Name, ErrBadSpec, len(m.Coefficients), len(fz.fs))
	}
	row := make([]float64, len(m.Coefficients))
	if err := fz.row(s, row); err != nil {
		return 0, fmt.Errorf("predict %s: %w", m.Name, err)
	}
	var v float64
	for i, c := range m.Coefficients {
		v += c * row[i]
	}
	switch m.Target {
	case TargetLogFactor:
		v = math.Exp(min(v, 700))
	case TargetLogSlowdown:
		v = 1 + math.Exp(min(v, 700))
	}
	if math.IsNaN(v) {
		return m.MaxFactor, nil
	}
	return min(max(v, m.MinFactor), m.MaxFactor), nil
}

// PredictLatencyMS returns the predicted co-located latency of s.Self:
// its solo latency times the predicted factor.
func (m *Model) PredictLatencyMS(s Sample) float64 { return s.Self.SoloMS * m.Predict(s) }

// UnmarshalJSON decodes a model and checks it: known features, one
// coefficient per feature, finite coefficients and a valid clamp range.
func (m *Model) UnmarshalJSON(data []byte) error {
	type plain Model
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("decode model: %w", err)
	}
	if err := p.Spec.validate(); err != nil {
		return fmt.Errorf("decode model: %w", err)
	}
	if len(p.Coefficients) != len(p.Features) {
		return fmt.Errorf("decode model %s: %w: %d coefficients for %d features", p.Name, ErrBadSpec, len(p.Coefficients), len(p.Features))
	}
	for i, c := range p.Coefficients {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return fmt.Errorf("decode model %s: %w: coefficient %d is %v", p.Name, ErrBadSpec, i, c)
		}
	}
	if !(p.MinFactor > 0) || !(p.MaxFactor >= p.MinFactor) || math.IsInf(p.MaxFactor, 0) {
		return fmt.Errorf("decode model %s: %w: clamp range [%v, %v]", p.Name, ErrBadSpec, p.MinFactor, p.MaxFactor)
	}
	fz, _ := newFeaturizer(p.Features)
	*m = Model(p)
	m.fz = fz
	return nil
}
