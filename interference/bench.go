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
	// PaperSkipped says why the paper's model could not be fitted (data
	// without L2 or DRAM utilisation); Paper is then zero.
	PaperSkipped string        `json:"paper_skipped,omitempty"`
	Best         BestQuantiles `json:"best"`
}

// Bench evaluates the paper's model and selects the best of Candidates() on
// the samples (random split seeded by seed).
func Bench(samples []Sample, seed uint64) (BenchReport, error) {
	sel, err := Select(samples, Candidates(), seed)
	if err != nil {
		return BenchReport{}, fmt.Errorf("bench interference: %w", err)
	}
	best := sel.Best()
	rep := BenchReport{Best: BestQuantiles{Name: best.Spec.Name, SplitQuantiles: SplitQuantiles{LOMO: best.LOMO, Random: best.Random}}}
	paper, ok := sel.Find(PaperName)
	switch {
	case !ok:
		return BenchReport{}, fmt.Errorf("bench interference: paper model: %w: not among the candidates", ErrNoCandidate)
	case paper.Skipped != "":
		rep.PaperSkipped = paper.Skipped
	default:
		rep.Paper = SplitQuantiles{LOMO: paper.LOMO, Random: paper.Random}
	}
	return rep, nil
}
