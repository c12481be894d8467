package gpulet

import (
	"math"
	"slices"
)

// member is one model's share of a gpu-let: the rate it must serve there.
type member struct {
	m    *model
	rate float64 // requests/s
}

// letSpec is a gpu-let being planned: its size and what shares it in time.
type letSpec struct {
	size    int
	members []member
}

// memberFit is how one member runs on its gpu-let.
type memberFit struct {
	batch  int
	solo   float64 // L(batch, size), ms
	factor float64 // interference slowdown, 1 without
}

// letFit is a feasible schedule of one gpu-let: every member runs one batch
// per duty cycle.
type letFit struct {
	duty    float64 // ms
	busy    float64 // sum of the members' batch latencies with interference, ms
	members []memberFit
}

// relTol absorbs floating-point noise in rate and latency comparisons.
const relTol = 1e-9

// fitLet finds the duty cycle D (ms) and batch sizes with which the members
// share a gpu-let of this size, each batch slowed by factors[i]: member i
// runs b_i = ⌈rate_i·D⌉ requests per cycle (so it keeps up with its rate),
// the batches fit in the cycle (Σ L_i(b_i)·f_i ≤ D) and every request meets
// its SLO after waiting one cycle (D + L_i(b_i)·f_i ≤ SLO_i). This is
// Nexus's squishy bin packing condition; for one model at full load it is
// 2·L ≤ SLO (knee.go).
//
// The batches only change where some rate_i·D crosses an integer, so the
// search walks those breakpoints: on (D_prev, D_j] the batches are fixed and
// the interval is feasible when max(D_prev, Σ L) ≤ min(D_j, min_i SLO_i −
// L_i). Among feasible intervals it takes the duty cycle with the lowest
// occupancy Σ L / D (the largest D of the interval), leaving the most room
// for others.
func (e *env) fitLet(typ, size int, ms []member, factors []float64) (letFit, bool) {
	if len(ms) == 0 {
		return letFit{}, true
	}
	tabs := make([]*table, len(ms))
	for i, mb := range ms {
		t := mb.m.tab(typ, size)
		if t == nil || !(mb.rate > 0) {
			return letFit{}, false
		}
		tabs[i] = t
	}
	// Only cycles between the batch-of-one busy time (no shorter cycle
	// holds a batch of every member) and the tightest SLO (no longer cycle
	// leaves time to run) can work; breakpoints outside are skipped, the
	// interval below the first one kept starting at its lower end anyway.
	lo, hi := 0.0, math.Inf(1)
	for i, mb := range ms {
		lo += tabs[i].lat[1] * factors[i]
		hi = min(hi, mb.m.cycleBound())
	}
	bps := e.bps[:0]
	for i, mb := range ms {
		perMS := mb.rate / 1000
		kLo := max(1, int(math.Floor(lo*perMS)))
		kHi := min(tabs[i].maxB, int(math.Ceil(hi*perMS)))
		for k := kLo; k <= kHi; k++ {
			bps = append(bps, float64(k)/perMS)
		}
	}
	if len(ms) > 1 {
		slices.Sort(bps)
		bps = slices.Compact(bps)
	}
	e.bps = bps
	bestOcc := math.Inf(1)
	var best letFit
	batches := make([]int, len(ms))
	prev := 0.0
	for _, d := range bps {
		busy, slack := 0.0, math.Inf(1)
		over := false
		for i, mb := range ms {
			b := int(math.Ceil(mb.rate/1000*d - relTol))
			b = max(b, 1)
			if b > tabs[i].maxB {
				over = true
				break
			}
			batches[i] = b
			l := tabs[i].lat[b] * factors[i]
			busy += l
			slack = min(slack, mb.m.cycleMax(l))
		}
		if over {
			break // batches only grow with D
		}
		upper := min(d, slack)
		lower := max(prev, busy)
		if upper > 0 && lower <= upper*(1+relTol) {
			if occ := busy / upper; occ < bestOcc {
				bestOcc = occ
				best.duty, best.busy = upper, busy
				best.members = make([]memberFit, len(ms))
				for i := range ms {
					best.members[i] = memberFit{batch: batches[i], solo: tabs[i].lat[batches[i]], factor: factors[i]}
				}
			}
		}
		prev = d
	}
	return best, !math.IsInf(bestOcc, 1)
}

// interferes says whether gpu-lets of g slow each other down in this plan:
// only under MPS, with an interference model, when two gpu-lets run models.
func (e *env) interferes(g *gpuRT, lets []letSpec) bool {
	if e.pred == nil || g.mig != nil {
		return false
	}
	n := 0
	for _, l := range lets {
		if len(l.members) > 0 {
			n++
		}
	}
	return n >= 2
}

// maxFixedPoint bounds the rounds of evalGPU's interference iteration.
const maxFixedPoint = 8

// evalGPU schedules every gpu-let of one GPU, with interference between
// them when the planner models it, and reports whether all fit.
//
// Interference couples the gpu-lets: a model's slowdown depends on the
// batches its neighbours run, which depend on their slowdowns. The factor of
// a member is the worst predicted over every model of every other gpu-let of
// the GPU (pairs are what the model was fitted on; a neighbour that runs
// several models in turn is as bad as its worst one). evalGPU starts from no
// slowdown, schedules, predicts the factors of the chosen batches and
// schedules again with factors that only ever grow, until the factors of
// the chosen batches are no larger than those it scheduled with: the plan
// then holds under its own prediction. The reported factor is the
// prediction for the final batches.
func (e *env) evalGPU(g *gpuRT, lets []letSpec) ([]letFit, bool) {
	fits, ok := e.scheduleGPU(g, lets)
	if !ok || !g.procsMemoryOK(lets, fits) {
		return nil, false
	}
	return fits, true
}

// scheduleGPU is evalGPU's schedule, before the memory of the processes it
// chose is checked.
func (e *env) scheduleGPU(g *gpuRT, lets []letSpec) ([]letFit, bool) {
	fits := make([]letFit, len(lets))
	factors := make([][]float64, len(lets))
	for i, l := range lets {
		factors[i] = make([]float64, len(l.members))
		for j := range factors[i] {
			factors[i][j] = 1
		}
	}
	interfere := e.interferes(g, lets)
	for round := 0; round < maxFixedPoint; round++ {
		for i, l := range lets {
			f, ok := e.fitLet(g.typ, l.size, l.members, factors[i])
			if !ok {
				return nil, false
			}
			fits[i] = f
		}
		if !interfere {
			return fits, true
		}
		grew := false
		for i, l := range lets {
			for j, mb := range l.members {
				nf := 1.0
				for k, o := range lets {
					if k == i {
						continue
					}
					for q, ob := range o.members {
						nf = max(nf, e.factor(g.typ, mb.m, fits[i].members[j].batch, l.size, ob.m, fits[k].members[q].batch, o.size))
					}
				}
				if math.IsInf(nf, 1) {
					return nil, false
				}
				if nf > factors[i][j]*(1+relTol) {
					factors[i][j] = nf
					grew = true
				}
				fits[i].members[j].factor = nf
			}
		}
		if !grew {
			return fits, true
		}
	}
	return nil, false
}

// withMember returns a copy of lets where model m serves rate more on
// gpu-let li (joining it, or adding to its share when already there).
func withMember(lets []letSpec, li int, m *model, rate float64) []letSpec {
	out := slices.Clone(lets)
	ms := slices.Clone(lets[li].members)
	found := false
	for i := range ms {
		if ms[i].m == m {
			ms[i].rate += rate
			found = true
		}
	}
	if !found {
		ms = append(ms, member{m: m, rate: rate})
	}
	out[li].members = ms
	return out
}

// bisectSteps bounds the bisection of maxAdd: the rate found is within
// 2⁻²⁰ (10⁻⁶) of the bracket below the largest feasible one.
const bisectSteps = 20

// maxAdd returns the largest rate, at most want, that model m can add on
// gpu-let li of g while every gpu-let of g stays feasible and the memory
// fits, with the GPU's schedule for it; 0 when none.
func (e *env) maxAdd(g *gpuRT, lets []letSpec, li int, m *model, want float64) (float64, []letSpec, []letFit) {
	t := m.tab(g.typ, lets[li].size)
	if t == nil || !t.fits1 || !(want > 0) {
		return 0, nil, nil
	}
	if !g.memoryOK(withMember(lets, li, m, want)) {
		return 0, nil, nil
	}
	try := func(r float64) ([]letSpec, []letFit, bool) {
		nl := withMember(lets, li, m, r)
		fits, ok := e.evalGPU(g, nl)
		return nl, fits, ok
	}
	if nl, fits, ok := try(want); ok {
		return want, nl, fits
	}
	// Every model needs rate/capacity of the gpu-let's time, so what the
	// others already take bounds what m can add.
	hi := min(want, t.cap)
	if others := timeShare(g, lets[li], m); others < 1 {
		hi = min(hi, t.cap*(1-others))
	} else {
		return 0, nil, nil
	}
	if hi < want {
		if nl, fits, ok := try(hi); ok {
			return hi, nl, fits
		}
	}
	lo := 0.0
	var bestL []letSpec
	var bestF []letFit
	for range bisectSteps {
		mid := (lo + hi) / 2
		if nl, fits, ok := try(mid); ok {
			lo, bestL, bestF = mid, nl, fits
		} else {
			hi = mid
		}
	}
	if lo <= want*1e-6 {
		return 0, nil, nil
	}
	return lo, bestL, bestF
}

// timeShare is the share of gpu-let l's time its members other than m need
// at the least: the sum of rate over affordable rate.
func timeShare(g *gpuRT, l letSpec, m *model) float64 {
	sh := 0.0
	for _, mb := range l.members {
		if mb.m == m {
			continue
		}
		t := mb.m.tab(g.typ, l.size)
		if t == nil || t.cap == 0 {
			return 1
		}
		sh += mb.rate / t.cap
	}
	return sh
}
