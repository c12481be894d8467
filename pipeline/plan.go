package pipeline

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrOverloaded is wrapped when the demand is more than the workers can carry
// with any variants.
var ErrOverloaded = errors.New("demand is above what the workers can carry")

// Scaling modes of a plan.
const (
	// HardwareScaling: every task runs its most accurate variant, on as few
	// workers as carry the demand.
	HardwareScaling = "hardware"
	// AccuracyScaling: the workers cannot carry the demand at full
	// accuracy; the plan is the variant mix of the highest expected
	// accuracy that carries it.
	AccuracyScaling = "accuracy"
)

// Plan is an allocation of workers to a pipeline's variants.
type Plan struct {
	Pipeline string `json:"pipeline"`
	// SLOMS is the pipeline's end-to-end SLO, ms.
	SLOMS float64 `json:"slo_ms"`
	// Demand is the rate planned for, requests per second at the first
	// task; Capacity the most this plan's workers carry in the same mix.
	Demand   float64 `json:"demand"`
	Capacity float64 `json:"capacity"`
	Scaling  string  `json:"scaling"`
	Workers  int     `json:"workers"`
	// Needed is the workers the demand needs when the plan was given
	// spare ones (WithSpare); 0 when it was not.
	Needed int `json:"needed,omitempty"`
	// Accuracy is the expected end-to-end accuracy of a request.
	Accuracy float64    `json:"accuracy"`
	Tasks    []TaskPlan `json:"tasks"`
}

// TaskPlan is one task's part of a plan.
type TaskPlan struct {
	Task string `json:"task"`
	// BudgetMS is the task's latency budget: what its batches may take
	// (a request behind it is dropped early or rerouted).
	BudgetMS float64 `json:"budget_ms"`
	// Load is the task's planned requests per second.
	Load     float64       `json:"load"`
	Variants []VariantPlan `json:"variants"`
}

// VariantPlan is one variant's part of a task's plan.
type VariantPlan struct {
	Variant string `json:"variant"`
	Workers int    `json:"workers"`
	// Batch is the largest batch it runs; BatchMS that batch's time.
	Batch   int     `json:"batch"`
	BatchMS float64 `json:"batch_ms"`
	// Share is the part of the task's requests it takes; Capacity what its
	// workers carry, requests per second.
	Share    float64 `json:"share"`
	Capacity float64 `json:"capacity"`
}

// Options bound a plan.
type Options struct {
	// Workers is how many workers the node has.
	Workers int
	// FullAccuracyOnly keeps every task on its most accurate variant
	// (hardware scaling alone, InferLine's way); the demand beyond it is
	// ErrOverloaded.
	FullAccuracyOnly bool
	// Utilization is the share of a worker's batch throughput b/ℓ(b) the
	// plan counts on, in (0, 1], leaving the rest to absorb requests that
	// arrive unevenly; 0 means 1 (Loki's model: a worker busy all the time).
	Utilization float64
}

// perWorker is the rate a worker is planned to carry with batches of b that
// take ms.
func (o Options) perWorker(b int, ms float64) float64 {
	u := o.Utilization
	if !(u > 0 && u <= 1) {
		u = 1
	}
	return u * float64(b) / ms * 1000
}

// config is one variant at the batch a budget allows.
type config struct {
	k       int     // variant index
	batch   int     // batch size
	ms      float64 // batch time
	rate    float64 // requests/s of one worker
	acc     float64
	fanout  float64
	allowed bool
}

// choice is one task's variants in a candidate plan: hi takes share of the
// task's load on nHi workers, lo the rest on nLo (hi == lo when one variant
// serves it all).
type choice struct {
	hi, lo   config
	nHi, nLo int
	share    float64
	load     float64 // the task's load, requests/s
}

// room is how far the choice's workers can take their task's load: the
// least, over its variants, of capacity over the share of the load it
// takes (∞ without load).
func (c choice) room() float64 {
	r := math.Inf(1)
	if c.load <= 0 {
		return r
	}
	r = float64(c.nHi) * c.hi.rate / (c.share * c.load)
	if c.lo.k != c.hi.k && c.share < 1 {
		r = min(r, float64(c.nLo)*c.lo.rate/((1-c.share)*c.load))
	}
	return r
}

// searcher holds one search's state.
type searcher struct {
	p        *Pipeline
	opts     Options
	demand   float64
	curves   curves
	cfg      [][]config // per task, per variant: the config at the current budget
	cur      []choice
	best     []choice
	bestAcc  float64
	bestW    int
	bestRoom float64
	// floor is the least accuracy a plan may have (Pipeline.MinAccuracy).
	floor float64
	found bool
}

// PlanFor plans the pipeline for demand requests per second on
// opts.Workers workers. It tries hardware scaling first and accuracy
// scaling when that cannot carry the demand (unless FullAccuracyOnly),
// never below the pipeline's MinAccuracy. When nothing can, it returns the
// plan of the largest demand the workers carry (MaxDemand) and an error
// wrapping ErrOverloaded.
//
// The search is exhaustive over: a latency budget per task (the batch
// times of its variants at Loki's batch sizes, adding up to at most half
// the SLO less the hops); for each task one variant or two (the more
// accurate takes what its workers carry, the other the rest); and every
// worker count. Serving a task with more than two variants at once is
// not searched (a basic solution of Loki's linear relaxation needs at
// most two per task when one worker constraint binds), nor routing a
// request's descendants by the variant that served it: every task mixes
// its variants in the same shares for all requests.
func PlanFor(p *Pipeline, demand float64, opts Options) (Plan, error) {
	if err := p.Validate(); err != nil {
		return Plan{}, err
	}
	if opts.Workers < len(p.Tasks) {
		return Plan{}, fmt.Errorf("plan pipeline %q: %w: %d workers for %d tasks", p.Name, ErrOverloaded, opts.Workers, len(p.Tasks))
	}
	if !(demand >= 0) || math.IsInf(demand, 0) {
		return Plan{}, fmt.Errorf("plan pipeline %q: %w: demand %v", p.Name, ErrBadPipeline, demand)
	}
	cv := curvesOf(p)
	if pl, ok := planAt(p, cv, demand, opts); ok {
		return pl, nil
	}
	top := maxDemand(p, cv, opts)
	pl, _ := planAt(p, cv, top, opts)
	return pl, fmt.Errorf("plan pipeline %q for %.4g req/s: %w (at most %.4g req/s on %d workers)", p.Name, demand, ErrOverloaded, top, opts.Workers)
}

// MaxDemand is the largest demand the workers carry (relative precision
// 1e-4), with the most accurate variants only when opts.FullAccuracyOnly.
func MaxDemand(p *Pipeline, opts Options) float64 {
	if p.Validate() != nil || opts.Workers < len(p.Tasks) {
		return 0
	}
	return maxDemand(p, curvesOf(p), opts)
}

func maxDemand(p *Pipeline, cv curves, opts Options) float64 {
	fits := func(d float64) bool {
		_, ok := planAt(p, cv, d, opts)
		return ok
	}
	lo, hi := 0.0, 1.0
	for fits(hi) {
		lo, hi = hi, hi*2
		if hi > 1e12 {
			return lo
		}
	}
	for hi-lo > 1e-4*hi {
		mid := (lo + hi) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// planAt is the plan for demand if one carries it: hardware scaling first,
// then accuracy scaling unless opts.FullAccuracyOnly.
func planAt(p *Pipeline, cv curves, demand float64, opts Options) (Plan, bool) {
	if pl, ok := search(p, cv, demand, opts, true); ok || opts.FullAccuracyOnly {
		return pl, ok
	}
	return search(p, cv, demand, opts, false)
}

// search finds the best plan for demand: with full accuracy only, the
// fewest workers; otherwise the highest accuracy, then the fewest workers.
func search(p *Pipeline, cv curves, demand float64, opts Options, full bool) (Plan, bool) {
	s := &searcher{p: p, opts: opts, demand: demand, bestAcc: -1, curves: cv, floor: p.MinAccuracy*p.FullAccuracy() - 1e-12,
		cfg: make([][]config, len(p.Tasks)), cur: make([]choice, len(p.Tasks))}
	for i, t := range p.Tasks {
		s.cfg[i] = make([]config, len(t.Variants))
		best := t.bestVariant()
		for k, v := range t.Variants {
			s.cfg[i][k] = config{k: k, acc: v.Accuracy, fanout: v.Fanout, allowed: !full || k == best}
		}
	}
	s.budget(0, p.budgetMS())
	if !s.found {
		return Plan{}, false
	}
	return s.plan(full), true
}

// budget enumerates task i's latency budget within left ms: each batch time
// of its variants that fits, the last task taking all that is left.
func (s *searcher) budget(i int, left float64) {
	if left <= 0 {
		return
	}
	if i == len(s.p.Tasks)-1 {
		s.configure(i, left)
		s.alloc(0, s.demand, s.opts.Workers)
		return
	}
	var cands []float64
	for k, curve := range s.curves[i] {
		if !s.cfg[i][k].allowed {
			continue
		}
		for _, pt := range curve {
			if pt.ms <= left {
				cands = append(cands, pt.ms)
			}
		}
	}
	slices.Sort(cands)
	for _, c := range slices.Compact(cands) {
		s.configure(i, c)
		s.budget(i+1, left-c)
	}
}

// configure sets every variant of task i to its largest batch within
// budget ms.
func (s *searcher) configure(i int, budget float64) {
	for k, curve := range s.curves[i] {
		c := &s.cfg[i][k]
		c.batch, c.ms, c.rate = 0, 0, 0
		for _, pt := range curve {
			if pt.ms <= budget && pt.ms > 0 {
				c.batch, c.ms, c.rate = pt.batch, pt.ms, s.opts.perWorker(pt.batch, pt.ms)
			}
		}
	}
}

// alloc chooses task i's variants for load requests/s with left workers,
// then the next task's.
func (s *searcher) alloc(i int, load float64, left int) {
	if i == len(s.p.Tasks) {
		s.consider()
		return
	}
	cfgs := s.cfg[i]
	for _, hi := range cfgs {
		if !hi.allowed || hi.batch == 0 {
			continue
		}
		need := max(int(math.Ceil(load/hi.rate-1e-9)), 1)
		if need <= left {
			s.cur[i] = choice{hi: hi, lo: hi, nHi: need, share: 1, load: load}
			s.alloc(i+1, load*hi.fanout, left-need)
		}
		for _, lo := range cfgs {
			if !lo.allowed || lo.batch == 0 || lo.k == hi.k || lo.acc > hi.acc || (lo.acc == hi.acc && lo.k < hi.k) {
				continue
			}
			for nHi := 1; nHi < need && nHi < left; nHi++ {
				share := float64(nHi) * hi.rate / load
				nLo := max(int(math.Ceil((1-share)*load/lo.rate-1e-9)), 1)
				if nHi+nLo > left {
					continue
				}
				s.cur[i] = choice{hi: hi, lo: lo, nHi: nHi, nLo: nLo, share: share, load: load}
				s.alloc(i+1, load*(share*hi.fanout+(1-share)*lo.fanout), left-nHi-nLo)
			}
		}
	}
}

// consider keeps the current candidate if it beats the best so far: a
// higher accuracy, then fewer workers, then more room (the tightest
// variant's capacity over its load: a detector at batch 2 carries more
// than at batch 1 on the same workers, and that room absorbs bursts).
func (s *searcher) consider() {
	acc := s.accuracy(s.cur)
	if acc < s.floor {
		return
	}
	w := 0
	for _, c := range s.cur {
		w += c.nHi + c.nLo
	}
	room := math.Inf(1)
	for _, c := range s.cur {
		room = min(room, c.room())
	}
	same := acc > s.bestAcc-1e-12 && acc < s.bestAcc+1e-12
	better := !s.found || acc > s.bestAcc+1e-12 || (same && w < s.bestW) || (same && w == s.bestW && room > s.bestRoom*(1+1e-9))
	if !better {
		return
	}
	s.found, s.bestAcc, s.bestW, s.bestRoom = true, acc, w, room
	s.best = slices.Clone(s.cur)
}

// accuracy is the expected end-to-end accuracy of the choices: every path
// through one variant per task, weighted by the product of its shares.
func (s *searcher) accuracy(cs []choice) float64 {
	ks := make([]int, len(cs))
	var walk func(i int, w float64) float64
	walk = func(i int, w float64) float64 {
		if w == 0 {
			return 0
		}
		if i == len(cs) {
			return w * s.p.pathAccuracy(ks)
		}
		c := cs[i]
		ks[i] = c.hi.k
		sum := walk(i+1, w*c.share)
		if c.lo.k != c.hi.k {
			ks[i] = c.lo.k
			sum += walk(i+1, w*(1-c.share))
		}
		return sum
	}
	return walk(0, 1)
}

// plan turns the best candidate into a Plan.
func (s *searcher) plan(full bool) Plan {
	pl := Plan{Pipeline: s.p.Name, SLOMS: msOf(s.p.SLO), Demand: s.demand, Workers: s.bestW, Accuracy: s.bestAcc, Scaling: AccuracyScaling}
	if full {
		pl.Scaling = HardwareScaling
	}
	load, capacity := s.demand, math.Inf(1)
	perRequest := 1.0 // task requests per first-task request
	for i, c := range s.best {
		tp := TaskPlan{Task: s.p.Tasks[i].Name, Load: load}
		add := func(cf config, n int, share float64) {
			vp := VariantPlan{Variant: s.p.Tasks[i].Variants[cf.k].Name, Workers: n, Batch: cf.batch, BatchMS: cf.ms,
				Share: share, Capacity: float64(n) * cf.rate}
			tp.Variants = append(tp.Variants, vp)
			tp.BudgetMS = max(tp.BudgetMS, cf.ms)
			if share > 0 {
				capacity = min(capacity, vp.Capacity/(share*perRequest))
			}
		}
		add(c.hi, c.nHi, c.share)
		if c.lo.k != c.hi.k {
			add(c.lo, c.nLo, 1-c.share)
		}
		pl.Tasks = append(pl.Tasks, tp)
		fan := c.share*c.hi.fanout + (1-c.share)*c.lo.fanout
		load *= fan
		perRequest *= fan
	}
	pl.Capacity = capacity
	return pl
}

// WithSpare gives the workers a plan leaves idle, up to workers in all, to
// its variants, one at a time to the variant whose workers carry the most
// of their capacity (its share of its task's load over its capacity): the
// same variants and shares, more room for requests that come in bursts
// (a detector's objects reach the classifier together). Needed keeps the
// plan's own count.
func (pl Plan) WithSpare(workers int) Plan {
	out := pl
	if out.Needed == 0 {
		out.Needed = pl.Workers
	}
	out.Tasks = make([]TaskPlan, len(pl.Tasks))
	for i, tp := range pl.Tasks {
		tp.Variants = slices.Clone(tp.Variants)
		out.Tasks[i] = tp
	}
	for out.Workers < workers {
		bi, bk, busiest := -1, -1, 0.0
		for i, tp := range out.Tasks {
			for k, v := range tp.Variants {
				if v.Workers < 1 || v.Capacity <= 0 {
					continue
				}
				if u := tp.Load * v.Share / v.Capacity; bi < 0 || u > busiest {
					bi, bk, busiest = i, k, u
				}
			}
		}
		if bi < 0 {
			break
		}
		v := &out.Tasks[bi].Variants[bk]
		v.Capacity *= float64(v.Workers+1) / float64(v.Workers)
		v.Workers++
		out.Workers++
	}
	// Each variant carries its capacity over its share of its task's load
	// per request at the first task.
	out.Capacity = math.Inf(1)
	for _, tp := range out.Tasks {
		for _, v := range tp.Variants {
			if v.Share > 0 && tp.Load > 0 {
				out.Capacity = min(out.Capacity, v.Capacity*out.Demand/(v.Share*tp.Load))
			}
		}
	}
	if math.IsInf(out.Capacity, 1) {
		out.Capacity = pl.Capacity
	}
	return out
}
