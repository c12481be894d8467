package interference

import (
	"math"
	"math/rand/v2"
	"slices"
)

// RandomSplit splits samples into a training and a test set by measured
// pair: the distinct Pair ids, sorted, are shuffled with a PCG generator
// seeded by seed, the first round(trainFrac × pairs) go to training and the
// rest to test. Both samples of one measured co-location (its two sides)
// therefore land on the same side of the split, so a test sample's own
// measurement never leaks into training. Samples keep their input order
// within each set.
func RandomSplit(samples []Sample, trainFrac float64, seed uint64) (train, test []Sample) {
	var ids []int
	seen := map[int]bool{}
	for _, s := range samples {
		if !seen[s.Pair] {
			seen[s.Pair] = true
			ids = append(ids, s.Pair)
		}
	}
	slices.Sort(ids)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	nTrain := int(math.Round(trainFrac * float64(len(ids))))
	inTrain := map[int]bool{}
	for _, id := range ids[:min(max(nTrain, 0), len(ids))] {
		inTrain[id] = true
	}
	for _, s := range samples {
		if inTrain[s.Pair] {
			train = append(train, s)
		} else {
			test = append(test, s)
		}
	}
	return train, test
}

// Fold is one leave-one-model-out fold.
type Fold struct {
	Held  string   // the held-out model
	Train []Sample // samples in which Held takes no part (neither side)
	Test  []Sample // samples in which Held takes part, as Self or as Other
}

// LeaveOneModelOut returns one fold per distinct model name (sorted): for
// model X, every sample in which X takes part — as the predicted model or as
// its neighbour — is held out, and the model is trained on all the others.
// So the predictor never sees X at all, neither its own slowdowns nor the
// slowdowns it causes. A sample appears in the test set of both of its
// models' folds.
func LeaveOneModelOut(samples []Sample) []Fold {
	var models []string
	for _, s := range samples {
		for _, m := range []string{s.Self.Model, s.Other.Model} {
			if !slices.Contains(models, m) {
				models = append(models, m)
			}
		}
	}
	slices.Sort(models)
	folds := make([]Fold, 0, len(models))
	for _, x := range models {
		f := Fold{Held: x}
		for _, s := range samples {
			if s.Self.Model == x || s.Other.Model == x {
				f.Test = append(f.Test, s)
			} else {
				f.Train = append(f.Train, s)
			}
		}
		folds = append(folds, f)
	}
	return folds
}
