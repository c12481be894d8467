package planbench

import (
	"context"
	"fmt"
	"math"

	"github.com/gpulet/gpuletd/gpulet"
)

// PaperRateStep is the gpu-let paper's rate step for the schedulability
// scenarios: every model's rate is one of 0, 200, 400, 600 req/s
// (gpulet-evaluation.yaml schedulability.rates_per_model).
const PaperRateStep = 200

// Levels is the number of rate levels per model (0, r, 2r, 3r).
const Levels = 4

// Schedulability is the JSON of `gpuletd bench schedulability`: how many of
// the scenarios each planner schedules.
type Schedulability struct {
	Set         string              `json:"set"`
	GPUs        int                 `json:"gpus"`
	RateStep    float64             `json:"rate_step"`
	Scenarios   int                 `json:"scenarios"`
	Schedulable map[gpulet.Algo]int `json:"schedulable"`
	// IdealOnly counts scenarios ideal schedules and gpulet-int does not;
	// HeuristicOnly the reverse (ideal's search is exhaustive only within
	// its canonical form, see gpulet's ideal.go).
	IdealOnly     int `json:"ideal_only"`
	HeuristicOnly int `json:"gpulet_int_only"`
}

// Scenarios lists every rate vector where each of the node's models has
// one of 0, step, 2·step, 3·step req/s, except all zero: 4^M − 1 of them
// (1,023 for the paper's five models, 255 for iGniter's four).
func (n *Node) Scenarios(step float64) [][]float64 {
	m := len(n.Models)
	total := int(math.Pow(Levels, float64(m)))
	out := make([][]float64, 0, total-1)
	for code := 1; code < total; code++ {
		rates := make([]float64, m)
		c := code
		for i := range m {
			rates[i] = float64(c%Levels) * step
			c /= Levels
		}
		out = append(out, rates)
	}
	return out
}

// RunSchedulability plans every scenario with every planner.
func RunSchedulability(ctx context.Context, n *Node, step float64) (*Schedulability, error) {
	if !(step > 0) || math.IsInf(step, 0) {
		return nil, fmt.Errorf("run schedulability: %w: rate step %v", ErrBadArgs, step)
	}
	res := &Schedulability{Set: n.Set.Name, GPUs: len(n.GPUs), RateStep: step, Schedulable: map[gpulet.Algo]int{}}
	for _, rates := range n.Scenarios(step) {
		res.Scenarios++
		ok := map[gpulet.Algo]bool{}
		for _, algo := range gpulet.Algos() {
			p, err := gpulet.Run(ctx, algo, n.Input(rates), n.Options())
			if err != nil {
				return nil, fmt.Errorf("run schedulability: scenario %v: %w", rates, err)
			}
			if p.Schedulable {
				res.Schedulable[algo]++
				ok[algo] = true
			}
		}
		switch {
		case ok[gpulet.AlgoIdeal] && !ok[gpulet.AlgoGpuletInt]:
			res.IdealOnly++
		case !ok[gpulet.AlgoIdeal] && ok[gpulet.AlgoGpuletInt]:
			res.HeuristicOnly++
		}
	}
	return res, nil
}
