package interference

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ErrNoCandidate is returned when no candidate can be fitted and evaluated
// on the data.
var ErrNoCandidate = errors.New("no usable candidate model")

// Result is one candidate's held-out evaluation.
type Result struct {
	Spec   Spec      `json:"spec"`
	LOMO   Quantiles `json:"lomo"`
	Random Quantiles `json:"random"`
	// Skipped says why the candidate could not be evaluated (a feature the
	// data lacks, a singular design); empty when it was.
	Skipped string `json:"skipped,omitempty"`

	lomoErrs, randomErrs Errors
}

// Score is what Select minimises: the worse of the two held-out p90s, so a
// winner must both generalise to unseen models and fit unseen pairs of
// known ones.
func (r Result) Score() float64 { return max(r.LOMO.P90, r.Random.P90) }

// LOMOErrors and RandomErrors are the pooled held-out relative errors
// (sorted) behind the quantiles, for CDFs.
func (r Result) LOMOErrors() Errors { return r.lomoErrs }

// RandomErrors: see LOMOErrors.
func (r Result) RandomErrors() Errors { return r.randomErrs }

// Selection is the outcome of Select: every candidate's result, best first.
type Selection struct {
	Results []Result `json:"results"`
}

// Best is the winning result.
func (s Selection) Best() Result { return s.Results[0] }

// Find returns the result of the named candidate.
func (s Selection) Find(name string) (Result, bool) {
	i := slices.IndexFunc(s.Results, func(r Result) bool { return r.Spec.Name == name })
	if i < 0 {
		return Result{}, false
	}
	return s.Results[i], true
}

// EvaluateSpec runs both held-out evaluations of one spec: HeldOutLOMO and
// HeldOutRandom with the seed.
func EvaluateSpec(samples []Sample, spec Spec, seed uint64) (Result, error) {
	lo, err := HeldOutLOMO(samples, spec)
	if err != nil {
		return Result{Spec: spec}, err
	}
	ra, err := HeldOutRandom(samples, spec, seed)
	if err != nil {
		return Result{Spec: spec}, err
	}
	return Result{Spec: spec, LOMO: lo.Quantiles(), Random: ra.Quantiles(), lomoErrs: lo, randomErrs: ra}, nil
}

// Select evaluates every candidate by held-out error (leave-one-model-out
// and the seeded random 70/30 split) and orders them by Score, ties broken
// by the LOMO p95 and then by name. Candidates that cannot be evaluated on
// these samples are kept at the end, marked Skipped. Training error plays no
// part.
func Select(samples []Sample, cands []Spec, seed uint64) (Selection, error) {
	var ok, skipped []Result
	for _, c := range cands {
		r, err := EvaluateSpec(samples, c, seed)
		if err != nil {
			r.Skipped = err.Error()
			skipped = append(skipped, r)
			continue
		}
		ok = append(ok, r)
	}
	if len(ok) == 0 {
		return Selection{Results: skipped}, fmt.Errorf("select interference model over %d samples: %w", len(samples), ErrNoCandidate)
	}
	slices.SortStableFunc(ok, func(a, b Result) int {
		return cmp.Or(cmp.Compare(a.Score(), b.Score()), cmp.Compare(a.LOMO.P95, b.LOMO.P95), cmp.Compare(a.Spec.Name, b.Spec.Name))
	})
	return Selection{Results: append(ok, skipped...)}, nil
}

// Train selects the best candidate on the samples and fits it on all of
// them; the model's Stats.HeldOut records the winner's held-out quantiles.
func Train(samples []Sample, cands []Spec, seed uint64) (*Model, Selection, error) {
	sel, err := Select(samples, cands, seed)
	if err != nil {
		return nil, sel, err
	}
	best := sel.Best()
	m, err := Fit(samples, best.Spec)
	if err != nil {
		return nil, sel, fmt.Errorf("train interference model: %w", err)
	}
	m.Stats.HeldOut = map[string]Quantiles{SplitLOMO: best.LOMO, SplitRandom: best.Random}
	return m, sel, nil
}

// NestedLOMO measures the whole procedure — Select among cands, then Fit —
// on models it has not seen: for each held-out model X, Select runs on the
// samples in which X takes no part (its own leave-one-model-out then trains
// on a single model pair each time), the winner is fitted on those samples
// and evaluated on every sample in which X takes part. It returns the pooled
// errors and, per held-out model, the candidate chosen.
func NestedLOMO(samples []Sample, cands []Spec, seed uint64) (Errors, map[string]string, error) {
	var all Errors
	chosen := map[string]string{}
	for _, f := range LeaveOneModelOut(samples) {
		m, sel, err := Train(f.Train, cands, seed)
		if err != nil {
			return nil, nil, fmt.Errorf("nested selection without %s: %w", f.Held, err)
		}
		e, err := Evaluate(m, f.Test)
		if err != nil {
			return nil, nil, fmt.Errorf("nested selection without %s: %w", f.Held, err)
		}
		chosen[f.Held] = sel.Best().Spec.Name
		all = append(all, e...)
	}
	return all.sorted(), chosen, nil
}
