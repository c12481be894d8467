package gpulet

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// The ideal planner: an exhaustive search over partition layouts and
// placements with the same feasibility rules as gpulet-int (feasible.go,
// interference included when a Predictor is given), used to measure how far
// the heuristics are from the best plan.
//
// Layouts: every GPU takes one of its maximal layouts — a multiset of
// allowed sizes the hardware can make (MPS: sum ≤ 100; MIG: migrules
// placement) with at most MaxGPULets gpu-lets and not dominated by another
// (same or more gpu-lets, each at least as large). A gpu-let may stay
// empty, so smaller layouts lose nothing.
//
// Placements: a model's rate is divisible, so "every placement" is a
// continuum; the search enumerates a canonical form of it. GPUs are filled
// in order and each gpu-let takes a set S of models at all of their
// remaining rate plus at most one filler model at the most that still fits
// (partial). For packing divisible items with linear capacities this loses
// nothing: an optimal solution can always be rearranged so that its
// item–bin graph is a forest, and filling the bins leaf first every bin
// completes all but at most one of its items. Capacities here are only
// nearly linear (batches are integers, duty cycles are shared), so "ideal"
// is exhaustive within that canonical form — the same form the heuristics'
// plans take — not over every real-valued split. Fills that leave room for
// a model with rate left are skipped (giving a model more rate now never
// makes the rest harder), failed (GPU, remaining rates) states are
// memoised, and a branch stops when the remaining rates need more GPU time
// than the remaining GPUs have even at every model's best rate per percent
// of GPU (a bound that interference and sharing only tighten).
type ideal struct {
	e       *env
	ctx     context.Context
	layouts [][][]int // per GPU, its maximal layouts
	eff     []float64 // per model, best affordable rate per percent of a GPU
	failed  map[string]bool
	path    [][]letSpec // per GPU, the lets chosen on the current branch
	pathF   [][]letFit
	best    float64 // least remaining work seen
	bestP   [][]letSpec
	bestF   [][]letFit
	nodes   int
	done    bool
	twin    []int // per model, the first model identical to it
}

func runIdeal(ctx context.Context, e *env) (*state, error) {
	id := &ideal{e: e, ctx: ctx, failed: map[string]bool{}, best: math.Inf(1)}
	for _, g := range e.gpus {
		id.layouts = append(id.layouts, maximalLayouts(g))
	}
	id.twin = twins(e.models)
	id.eff = make([]float64, len(e.models))
	rem := make([]float64, len(e.models))
	for i, m := range e.models {
		rem[i] = m.rate
		for _, g := range e.gpus {
			for _, s := range g.sizes {
				if t := m.tab(g.typ, s); t != nil && m.mem <= g.letMemory(s) {
					id.eff[i] = max(id.eff[i], t.cap/float64(s))
				}
			}
		}
	}
	id.path = make([][]letSpec, len(e.gpus))
	id.pathF = make([][]letFit, len(e.gpus))
	if err := id.search(0, rem); err != nil {
		return nil, err
	}
	s := newState(e)
	for gi := range e.gpus {
		if id.bestP == nil || len(id.bestP[gi]) == 0 {
			continue
		}
		var lets []letSpec
		var fits []letFit
		for i, l := range id.bestP[gi] {
			if len(l.members) > 0 {
				lets = append(lets, l)
				fits = append(fits, id.bestF[gi][i])
			}
		}
		s.gpus[gi].lets, s.gpus[gi].fits = lets, fits
		for _, l := range lets {
			for _, mb := range l.members {
				s.assigned[mb.m] += mb.rate
			}
		}
	}
	if !id.done {
		// No plan serves everything. The search prunes branches that
		// cannot finish, so its fullest partial plan may be poor: report
		// the elastic planner's when that leaves less work unplaced.
		if h := runElastic(e, false, false); id.work(h.left()) < id.work(s.left()) {
			s = h
		}
	}
	for _, m := range e.models {
		if left := m.rate - s.assigned[m]; left > m.rate*1e-6 {
			s.reasons[m] = fmt.Sprintf("%.4g req/s left over: no layout and placement of %s serves it within its SLO, memory and interference limits", left, theDevices(len(e.gpus)))
		}
	}
	return s, nil
}

// work is the GPU time, in percent of one GPU, the remaining rates need at
// least.
func (id *ideal) work(rem []float64) float64 {
	w := 0.0
	for i, r := range rem {
		if r > 0 {
			if id.eff[i] == 0 {
				return math.Inf(1)
			}
			w += r / id.eff[i]
		}
	}
	return w
}

func (id *ideal) finished(rem []float64) bool {
	for i, r := range rem {
		if r > id.e.models[i].rate*relTol {
			return false
		}
	}
	return true
}

// record keeps the current branch when it leaves the least work.
func (id *ideal) record(gi int, rem []float64) {
	w := id.work(rem)
	if id.finished(rem) {
		w = 0
	}
	if w < id.best {
		id.best = w
		id.bestP = make([][]letSpec, len(id.path))
		id.bestF = make([][]letFit, len(id.path))
		for i := range gi {
			id.bestP[i] = id.path[i]
			id.bestF[i] = id.pathF[i]
		}
	}
}

// search fills GPUs gi.. with the remaining rates; done is set on success.
func (id *ideal) search(gi int, rem []float64) error {
	id.nodes++
	if id.nodes&255 == 0 {
		if err := id.ctx.Err(); err != nil {
			return fmt.Errorf("plan with ideal: %w", err)
		}
	}
	id.record(gi, rem)
	if id.finished(rem) {
		id.done = true
		return nil
	}
	if gi == len(id.e.gpus) {
		return nil
	}
	if id.work(rem) > 100*float64(len(id.e.gpus)-gi)*(1+1e-9) {
		return nil
	}
	key := id.remKey(gi, rem)
	if id.failed[key] {
		return nil
	}
	g := id.e.gpus[gi]
	for _, layout := range id.layouts[gi] {
		lets := make([]letSpec, len(layout))
		for i, s := range layout {
			lets[i] = letSpec{size: s}
		}
		if err := id.fillLets(gi, g, lets, 0, rem); err != nil || id.done {
			return err
		}
	}
	id.failed[key] = true
	return nil
}

// fillLets chooses the fill of gpu-let j of GPU gi, then the next.
func (id *ideal) fillLets(gi int, g *gpuRT, lets []letSpec, j int, rem []float64) error {
	if j == len(lets) {
		fits, ok := id.e.evalGPU(g, lets)
		if !ok {
			return nil
		}
		id.path[gi], id.pathF[gi] = lets, fits
		err := id.search(gi+1, rem)
		id.path[gi], id.pathF[gi] = nil, nil
		return err
	}
	for _, f := range id.fills(g, lets, j, rem) {
		next := slices.Clone(lets)
		next[j] = letSpec{size: lets[j].size, members: f}
		nrem := slices.Clone(rem)
		for _, mb := range f {
			nrem[mb.m.idx] = max(0, nrem[mb.m.idx]-mb.rate)
		}
		if err := id.fillLets(gi, g, next, j+1, nrem); err != nil || id.done {
			return err
		}
	}
	return nil
}

// fills lists the canonical fills of gpu-let j given the gpu-lets before it:
// sets S at their full remaining rates plus at most one partial filler,
// those placing the most work first, and last the empty gpu-let.
func (id *ideal) fills(g *gpuRT, lets []letSpec, j int, rem []float64) [][]member {
	size := lets[j].size
	var cand []*model
	for i, r := range rem {
		m := id.e.models[i]
		if r <= m.rate*relTol {
			continue
		}
		if t := m.tab(g.typ, size); t != nil && t.fits1 && m.mem <= g.letMemory(size) {
			cand = append(cand, m)
		}
	}
	type fill struct {
		ms   []member
		work float64
	}
	var out []fill
	n := len(cand)
	// Identical models with equal remaining rates are interchangeable: of
	// such twins only the first ones are taken into a set, and only the
	// first one left out is tried as the filler.
	same := func(a, b *model) bool { return id.twin[a.idx] == id.twin[b.idx] && rem[a.idx] == rem[b.idx] }
	for mask := 0; mask < 1<<n; mask++ {
		canonical := true
		for i := range n {
			for k := i + 1; k < n && canonical; k++ {
				if mask&(1<<k) != 0 && mask&(1<<i) == 0 && same(cand[i], cand[k]) {
					canonical = false
				}
			}
		}
		if !canonical {
			continue
		}
		var set []member
		frac := 0.0
		for i := range n {
			if mask&(1<<i) != 0 {
				m := cand[i]
				set = append(set, member{m, rem[m.idx]})
				frac += rem[m.idx] / m.tab(g.typ, size).cap
			}
		}
		if frac > 1+1e-9 {
			continue // needs more than all of the gpu-let's time
		}
		trial := slices.Clone(lets[:j+1])
		trial[j] = letSpec{size: size, members: set}
		if len(set) > 0 {
			if !g.memoryOK(trial) {
				continue
			}
			if _, ok := id.e.evalGPU(g, trial); !ok {
				continue
			}
		}
		maximal := true
		for i := range n {
			if mask&(1<<i) != 0 {
				continue
			}
			m := cand[i]
			twinFirst := true
			for h := range i {
				if mask&(1<<h) == 0 && same(cand[h], m) {
					twinFirst = false
				}
			}
			if !twinFirst {
				continue
			}
			want := rem[m.idx]
			r, nl, _ := id.e.maxAdd(g, trial, j, m, want)
			if r <= 0 {
				continue
			}
			maximal = false
			if r >= want*(1-relTol) {
				continue // the set with m at full rate is enumerated itself
			}
			f := nl[j].members
			out = append(out, fill{f, id.fillWork(f)})
		}
		if maximal && len(set) > 0 {
			out = append(out, fill{set, id.fillWork(set)})
		}
	}
	slices.SortStableFunc(out, func(a, b fill) int { return cmp.Compare(b.work, a.work) })
	res := make([][]member, 0, len(out)+1)
	for _, f := range out {
		res = append(res, f.ms)
	}
	return append(res, nil)
}

func (id *ideal) fillWork(ms []member) float64 {
	w := 0.0
	for _, mb := range ms {
		w += mb.rate / id.eff[mb.m.idx]
	}
	return w
}

// remKey identifies a search state for the failure memo: the GPU reached
// and the remaining rates to a thousandth of a request per second, those
// of identical models sorted so that permuted twins share a key.
func (id *ideal) remKey(gi int, rem []float64) string {
	q := make([]int64, len(rem))
	for i, r := range rem {
		q[i] = int64(math.Round(r * 1000))
	}
	for i := range q {
		if id.twin[i] != i {
			continue
		}
		var grp []int
		for k := i; k < len(q); k++ {
			if id.twin[k] == i {
				grp = append(grp, k)
			}
		}
		vals := make([]int64, len(grp))
		for x, k := range grp {
			vals[x] = q[k]
		}
		slices.Sort(vals)
		for x, k := range grp {
			q[k] = vals[x]
		}
	}
	b := strconv.AppendInt(nil, int64(gi), 10)
	for _, v := range q {
		b = append(b, ',')
		b = strconv.AppendInt(b, v, 10)
	}
	return string(b)
}

// twins maps every model to the first model identical to it: the same
// profiles, SLO and memory (rates may differ).
func twins(ms []*model) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = i
		for k := range i {
			o := ms[k]
			if o.slo == m.slo && o.mem == m.mem && slices.Equal(o.profs, m.profs) {
				out[i] = k
				break
			}
		}
	}
	return out
}

// maximalLayouts lists the layouts of g that no other layout dominates,
// larger gpu-lets first.
func maximalLayouts(g *gpuRT) [][]int {
	var all [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) > 0 && g.layoutOK(cur) {
			all = append(all, slices.Clone(cur))
		}
		if len(cur) == g.max {
			return
		}
		for i := start; i < len(g.sizes); i++ {
			next := append(slices.Clone(cur), g.sizes[i])
			if g.mig == nil && sum(next) > 100 {
				break
			}
			rec(i, next)
		}
	}
	rec(0, nil)
	for _, l := range all {
		slices.SortFunc(l, func(a, b int) int { return cmp.Compare(b, a) })
	}
	var out [][]int
	for i, a := range all {
		dominated := false
		for k, b := range all {
			if i != k && dominates(b, a) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b []int) int { return cmp.Compare(len(a), len(b)) })
	return out
}

// dominates reports whether layout b (sizes descending) is at least layout
// a everywhere and differs: a's gpu-lets fit one by one into b's.
func dominates(b, a []int) bool {
	if len(b) < len(a) || slices.Equal(a, b) {
		return false
	}
	for i := range a {
		if a[i] > b[i] {
			return false
		}
	}
	return true
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}
