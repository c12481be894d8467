package interference

import "fmt"

// Split names used in reports and in FitStats.HeldOut.
const (
	SplitLOMO   = "lomo"
	SplitRandom = "random"
)

// TrainFraction is the share of measured pairs used for training in the
// random split (the gpu-let paper's 70/30, section 4.4).
const TrainFraction = 0.7

// HeldOutRandom fits spec on the training part of RandomSplit(samples,
// TrainFraction, seed) and returns the relative errors on the test part.
func HeldOutRandom(samples []Sample, spec Spec, seed uint64) (Errors, error) {
	train, test := RandomSplit(samples, TrainFraction, seed)
	m, err := Fit(train, spec)
	if err != nil {
		return nil, fmt.Errorf("hold out random split: %w", err)
	}
	return Evaluate(m, test)
}

// HeldOutLOMO runs every LeaveOneModelOut fold (fit on Train, evaluate on
// Test) and returns the pooled, sorted relative errors of all folds.
func HeldOutLOMO(samples []Sample, spec Spec) (Errors, error) {
	var all Errors
	for _, f := range LeaveOneModelOut(samples) {
		m, err := Fit(f.Train, spec)
		if err != nil {
			return nil, fmt.Errorf("hold out %s: %w", f.Held, err)
		}
		e, err := Evaluate(m, f.Test)
		if err != nil {
			return nil, fmt.Errorf("hold out %s: %w", f.Held, err)
		}
		all = append(all, e...)
	}
	return all.sorted(), nil
}
