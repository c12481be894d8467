package interference

import "fmt"

// DefaultSeed seeds the random 70/30 split of the benchmark and of Train
// when the caller has no seed of its own.
const DefaultSeed uint64 = 1

// SplitQuantiles are held-out error quantiles under both splits.
type SplitQuantiles struct {
	LOMO   Quantiles `json:"lomo"`
	Random Quantiles `json:"random"`
}

// BestQuantiles are the winning candidate's name and quantiles.
type BestQuantiles struct {
	Name string `json:"name"`
	SplitQuantiles
}

// BenchReport is what `gpuletd bench interference --json` prints:
// {"paper": {"lomo": {"p50","p90","p95"}, "random": {...}}, "best": {"name",
// "lomo": {...}, "random": {...}}}, errors as fractions.
type BenchReport struct {
	Paper SplitQuantiles `json:"paper"`
	Best  BestQuantiles  `json:"best"`
}

// Bench evaluates the paper's model and selects the best of Candidates() on
// the samples (random split seeded by seed).
func Bench(samples []Sample, seed uint64) (BenchReport, error) {
	sel, err := Select(samples, Candidates(), seed)
	if err != nil {
		return BenchReport{}, fmt.Errorf("bench interference: %w", err)
	}
	paper, ok := sel.Find(PaperName)
	if !ok || paper.Skipped != "" {
		return BenchReport{}, fmt.Errorf("bench interference: paper model: %w: %s", ErrNoCandidate, paper.Skipped)
	}
	best := sel.Best()
	return BenchReport{
		Paper: SplitQuantiles{LOMO: paper.LOMO, Random: paper.Random},
		Best:  BestQuantiles{Name: best.Spec.Name, SplitQuantiles: SplitQuantiles{LOMO: best.LOMO, Random: best.Random}},
	}, nil
}
