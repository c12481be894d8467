package pipeline

import (
	"errors"
	"fmt"
	"time"
)

// CurvePoint is the plan at one demand of a Curve.
type CurvePoint struct {
	// Factor is the demand as a multiple of what hardware scaling alone
	// carries on the workers.
	Factor float64 `json:"factor"`
	Plan   Plan    `json:"plan"`
	// RelativeAccuracy is Plan.Accuracy over the full accuracy.
	RelativeAccuracy float64 `json:"relative_accuracy"`
	// Overloaded is true when no plan carries the demand (Plan is then the
	// plan of the largest demand that fits).
	Overloaded bool `json:"overloaded"`
	// PlanMS is how long planning took, milliseconds.
	PlanMS float64 `json:"plan_ms"`
}

// CurveResult is how a pipeline's plan changes with demand on a fixed
// number of workers.
type CurveResult struct {
	Pipeline string `json:"pipeline"`
	Workers  int    `json:"workers"`
	// FullAccuracyMax is the largest demand hardware scaling alone carries
	// (the most accurate variants on every worker); MaxDemand the largest
	// any variants carry; PlannedCapacityRatio their ratio.
	FullAccuracyMax      float64      `json:"full_accuracy_max"`
	MaxDemand            float64      `json:"max_demand"`
	PlannedCapacityRatio float64      `json:"planned_capacity_ratio"`
	FullAccuracy         float64      `json:"full_accuracy"`
	Points               []CurvePoint `json:"points"`
}

// Curve plans the pipeline on workers at each factor × the full-accuracy
// maximum.
func Curve(p *Pipeline, workers int, factors []float64) (CurveResult, error) {
	if err := p.Validate(); err != nil {
		return CurveResult{}, err
	}
	if workers < len(p.Tasks) {
		return CurveResult{}, fmt.Errorf("plan pipeline %q: %w: %d workers for %d tasks", p.Name, ErrOverloaded, workers, len(p.Tasks))
	}
	r := CurveResult{Pipeline: p.Name, Workers: workers, FullAccuracy: p.FullAccuracy(),
		FullAccuracyMax: MaxDemand(p, Options{Workers: workers, FullAccuracyOnly: true}),
		MaxDemand:       MaxDemand(p, Options{Workers: workers})}
	if r.FullAccuracyMax > 0 {
		r.PlannedCapacityRatio = r.MaxDemand / r.FullAccuracyMax
	}
	for _, f := range factors {
		start := time.Now()
		pl, err := PlanFor(p, f*r.FullAccuracyMax, Options{Workers: workers})
		pt := CurvePoint{Factor: f, Plan: pl, PlanMS: float64(time.Since(start)) / float64(time.Millisecond)}
		switch {
		case errors.Is(err, ErrOverloaded):
			pt.Overloaded = true
		case err != nil:
			return CurveResult{}, err
		}
		pt.RelativeAccuracy = pl.Accuracy / r.FullAccuracy
		r.Points = append(r.Points, pt)
	}
	return r, nil
}
