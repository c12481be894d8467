package planbench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

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
	Set       string  `json:"set"`
	GPUs      int     `json:"gpus"`
	RateStep  float64 `json:"rate_step"`
	Scenarios int     `json:"scenarios"`
	// Models are the models the scenarios vary (ScenarioModels).
	Models      []string            `json:"models"`
	Schedulable map[gpulet.Algo]int `json:"schedulable"`
	// IdealOnly counts scenarios ideal schedules and gpulet-int does not;
	// HeuristicOnly the reverse (ideal's search is exhaustive only within
	// its canonical form, see gpulet's ideal.go).
	IdealOnly     int `json:"ideal_only"`
	HeuristicOnly int `json:"gpulet_int_only"`
	// TimedOut counts, per planner, the scenarios whose plan ran past the
	// node's PlanLimit; they count as not schedulable.
	TimedOut map[gpulet.Algo]int `json:"timed_out,omitempty"`
}

// MaxScenarioModels is the most models the schedulability scenarios vary:
// the gpu-let paper's five. 4^M − 1 scenarios of a set with more models
// (4,194,303 for parvagpu-a100's eleven) are too many to plan with ideal.
const MaxScenarioModels = 5

// ScenarioModels are the indexes (in Models) of the models the scenarios
// vary: all of them up to MaxScenarioModels; for more, five spread over
// the models ranked by L(32, 100) as the mixes rank them (the shortest, the
// quartiles, the median and the longest), so the scenarios keep the range
// of latencies and SLOs.
func (n *Node) ScenarioModels() []int {
	if len(n.Models) <= MaxScenarioModels {
		out := make([]int, len(n.Models))
		for i := range out {
			out[i] = i
		}
		return out
	}
	ranked := n.ranked()
	var out []int
	for k := range MaxScenarioModels {
		r := ranked[int(math.Round(float64(k)*float64(len(ranked)-1)/float64(MaxScenarioModels-1)))]
		out = append(out, slices.IndexFunc(n.Models, func(m Model) bool { return m.Name == r.Name }))
	}
	slices.Sort(out)
	return out
}

// Scenarios lists every rate vector where each of the scenario models
// (ScenarioModels) has one of 0, step, 2·step, 3·step req/s, except all
// zero, and the other models 0: 4^M − 1 of them (1,023 for five models,
// 255 for iGniter's four).
func (n *Node) Scenarios(step float64) [][]float64 {
	idx := n.ScenarioModels()
	m := len(idx)
	total := int(math.Pow(Levels, float64(m)))
	out := make([][]float64, 0, total-1)
	for code := 1; code < total; code++ {
		rates := make([]float64, len(n.Models))
		c := code
		for _, i := range idx {
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
	for _, i := range n.ScenarioModels() {
		res.Models = append(res.Models, n.Models[i].Name)
	}
	for _, rates := range n.Scenarios(step) {
		res.Scenarios++
		ok := map[gpulet.Algo]bool{}
		for _, algo := range gpulet.Algos() {
			p, timedOut, err := planWithin(ctx, algo, n.Input(rates), n.Options(), n.PlanLimit)
			if err != nil {
				return nil, fmt.Errorf("run schedulability: scenario %v: %w", rates, err)
			}
			if timedOut {
				if res.TimedOut == nil {
					res.TimedOut = map[gpulet.Algo]int{}
				}
				res.TimedOut[algo]++
				continue
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

// planWithin runs the planner on in held to limit (none when 0);
// timedOut says the plan ran past it while ctx itself goes on, so the
// caller can count it as not schedulable.
func planWithin(ctx context.Context, algo gpulet.Algo, in gpulet.Input, opts gpulet.Options, limit time.Duration) (p *gpulet.Plan, timedOut bool, err error) {
	pctx, cancel := ctx, context.CancelFunc(func() {})
	if limit > 0 {
		pctx, cancel = context.WithTimeout(ctx, limit)
	}
	defer cancel()
	p, err = gpulet.Run(pctx, algo, in, opts)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, true, nil
	}
	return p, false, err
}
