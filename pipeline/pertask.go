package pipeline

import (
	"fmt"
	"math"
)

// PerTaskScaling is the scaling mode of a PerTask plan.
const PerTaskScaling = "per-task"

// PerTask plans every task on its own, as a system that serves a pipeline's
// tasks as independent models would (pipeline-unaware accuracy scaling, the
// way Proteus scales each model; Loki §6 compares with it): each task gets
// an equal share of the latency budget, the workers are split between the
// tasks in proportion to what each needs at full accuracy for its own load,
// and each task then takes the most accurate variant mix that carries its
// load on its workers, or its fastest variant on all of them when nothing
// does. loads[i] is task i's load in requests per second, as that task
// measures it (its upstream's fanout under the variants running now), so
// the plan follows a change of upstream variants only once the new load has
// been seen. Unlike PlanFor it neither trades one task's accuracy against
// another's nor moves workers between tasks to carry the demand.
func PerTask(p *Pipeline, loads []float64, opts Options) (Plan, error) {
	if err := p.Validate(); err != nil {
		return Plan{}, err
	}
	n := len(p.Tasks)
	if len(loads) != n {
		return Plan{}, fmt.Errorf("plan pipeline %q per task: %w: %d loads for %d tasks", p.Name, ErrBadPipeline, len(loads), n)
	}
	if opts.Workers < n {
		return Plan{}, fmt.Errorf("plan pipeline %q per task: %w: %d workers for %d tasks", p.Name, ErrOverloaded, opts.Workers, n)
	}
	for i, l := range loads {
		if !(l >= 0) || math.IsInf(l, 0) {
			return Plan{}, fmt.Errorf("plan pipeline %q per task: %w: load %v of task %d", p.Name, ErrBadPipeline, l, i)
		}
	}
	cv := curvesOf(p)
	budget := p.budgetMS() / float64(n)
	cfgs := make([][]config, n)
	need := make([]int, n)
	for i, t := range p.Tasks {
		cfgs[i] = configsAt(t, cv[i], budget, opts)
		best := cfgs[i][t.bestVariant()]
		if best.batch == 0 {
			return Plan{}, fmt.Errorf("plan pipeline %q per task: %w: task %q's most accurate variant fits no batch in %.1f ms", p.Name, ErrOverloaded, t.Name, budget)
		}
		need[i] = max(int(math.Ceil(loads[i]/best.rate-1e-9)), 1)
	}
	workers := splitWorkers(need, opts.Workers)
	pl := Plan{Pipeline: p.Name, SLOMS: msOf(p.SLO), Demand: loads[0], Scaling: PerTaskScaling, Capacity: math.Inf(1)}
	choices := make([]choice, n)
	overloaded := false
	for i, t := range p.Tasks {
		c, ok := bestChoice(cfgs[i], t.bestVariant(), loads[i], workers[i])
		overloaded = overloaded || !ok
		choices[i] = c
		tp := TaskPlan{Task: t.Name, Load: loads[i], BudgetMS: budget}
		capacity := 0.0
		for _, v := range []struct {
			cf    config
			n     int
			share float64
		}{{c.hi, c.nHi, c.share}, {c.lo, c.nLo, 1 - c.share}} {
			if v.n == 0 {
				continue
			}
			vp := VariantPlan{Variant: t.Variants[v.cf.k].Name, Workers: v.n, Batch: v.cf.batch, BatchMS: v.cf.ms,
				Share: v.share, Capacity: float64(v.n) * v.cf.rate}
			tp.Variants = append(tp.Variants, vp)
			capacity += vp.Capacity
			pl.Workers += v.n
		}
		pl.Tasks = append(pl.Tasks, tp)
		if loads[i] > 0 {
			pl.Capacity = min(pl.Capacity, loads[0]*capacity/loads[i])
		}
	}
	if math.IsInf(pl.Capacity, 1) {
		pl.Capacity = 0
	}
	s := &searcher{p: p}
	pl.Accuracy = s.accuracy(choices)
	if !overloaded && pl.Workers == sum(need) {
		pl.Scaling = HardwareScaling
	}
	if overloaded {
		return pl, fmt.Errorf("plan pipeline %q per task: %w", p.Name, ErrOverloaded)
	}
	return pl, nil
}

// configsAt is every variant of a task at its largest batch within budget
// ms (batch 0 where none fits).
func configsAt(t Task, curves [][]batchPoint, budget float64, opts Options) []config {
	out := make([]config, len(t.Variants))
	for k, v := range t.Variants {
		c := config{k: k, acc: v.Accuracy, fanout: v.Fanout, allowed: true}
		for _, pt := range curves[k] {
			if pt.ms <= budget && pt.ms > 0 {
				c.batch, c.ms, c.rate = pt.batch, pt.ms, opts.perWorker(pt.batch, pt.ms)
			}
		}
		out[k] = c
	}
	return out
}

// splitWorkers gives each task what it needs when the workers suffice, else
// splits them in proportion to the needs (largest remainders, at least one
// each).
func splitWorkers(need []int, workers int) []int {
	out := make([]int, len(need))
	total := sum(need)
	if total <= workers {
		copy(out, need)
		return out
	}
	rem := make([]float64, len(need))
	left := workers
	for i, nd := range need {
		exact := float64(nd) * float64(workers) / float64(total)
		out[i] = max(int(exact), 1)
		rem[i] = exact - float64(int(exact))
		left -= out[i]
	}
	for left > 0 {
		best := -1
		for i := range rem {
			if best < 0 || rem[i] > rem[best] {
				best = i
			}
		}
		out[best]++
		rem[best] = -1
		left--
	}
	for left < 0 { // the minimum of one each overshot: take from the largest
		big := 0
		for i := range out {
			if out[i] > out[big] {
				big = i
			}
		}
		out[big]--
		left++
	}
	return out
}

// bestChoice is the most accurate mix of one or two variants that carries
// load on workers (the more accurate taking what its workers carry); ok is
// false when none does, and the choice is then the fastest variant on every
// worker.
func bestChoice(cfgs []config, best int, load float64, workers int) (choice, bool) {
	var out choice
	bestAcc, found := -1.0, false
	try := func(c choice, acc float64) {
		if acc > bestAcc+1e-12 {
			out, bestAcc, found = c, acc, true
		}
	}
	for _, hi := range cfgs {
		if hi.batch == 0 {
			continue
		}
		if need := max(int(math.Ceil(load/hi.rate-1e-9)), 1); need <= workers {
			try(choice{hi: hi, lo: hi, nHi: need, share: 1}, hi.acc)
		}
		for _, lo := range cfgs {
			if lo.batch == 0 || lo.k == hi.k || lo.acc >= hi.acc || load <= 0 {
				continue
			}
			for nHi := 1; nHi < workers; nHi++ {
				share := float64(nHi) * hi.rate / load
				if share >= 1 {
					break
				}
				nLo := max(int(math.Ceil((1-share)*load/lo.rate-1e-9)), 1)
				if nHi+nLo > workers {
					continue
				}
				try(choice{hi: hi, lo: lo, nHi: nHi, nLo: nLo, share: share}, share*hi.acc+(1-share)*lo.acc)
			}
		}
	}
	if found {
		return out, true
	}
	fast := cfgs[best]
	for _, c := range cfgs {
		if c.batch > 0 && c.rate > fast.rate {
			fast = c
		}
	}
	return choice{hi: fast, lo: fast, nHi: workers, share: 1}, false
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}
