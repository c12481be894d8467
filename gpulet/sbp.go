package gpulet

import (
	"cmp"
	"slices"
)

// SBP is Nexus's squishy bin packing (Shen et al., SOSP 2019, the gpu-let
// paper's baseline in section 6.1), with the same latency rules as the other
// planners (feasible.go) and the same inputs:
//
//  1. every GPU is one gpu-let of 100%: temporal sharing only, so there is
//     no interference between gpu-lets;
//  2. models in rate order, descending: each gets as many whole GPUs as its
//     rate saturates, each serving the model's affordable rate at 100%
//     (the largest b/L(b) with 2·L(b) ≤ SLO);
//  3. the residues (rate below one GPU's worth) are packed best-fit
//     decreasing by their occupancy alone on a GPU: each goes to the used
//     GPU where it fits with the highest resulting occupancy (Nexus merges
//     a residue into a node only when every session there still meets its
//     SLO with the shared duty cycle), else to a free GPU;
//  4. when no GPU can take a residue whole, as much of it as fits goes to
//     the GPU that takes the most, repeatedly (the same residue handling
//     elastic partitioning gets); what is left is unscheduled.
func runSBP(e *env) *state {
	s := newState(e)
	order := slices.Clone(e.models)
	slices.SortStableFunc(order, func(a, b *model) int {
		if c := cmp.Compare(b.rate, a.rate); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	type residue struct {
		m    *model
		rate float64
		occ  float64
	}
	var res []residue
	for _, m := range order {
		left := m.rate
		for left > m.rate*relTol {
			gi, capacity := s.freeWhole(m)
			if gi < 0 || left < capacity {
				break
			}
			r, nl, fits := e.maxAdd(s.gpus[gi].rt, []letSpec{{size: 100}}, 0, m, capacity)
			if r <= 0 {
				break
			}
			s.commit(gi, nl, fits, m, r)
			left -= r
		}
		if left > m.rate*relTol {
			occ := 1.0
			if gi, _ := s.freeWhole(m); gi >= 0 {
				if f, ok := e.fitLet(s.gpus[gi].rt.typ, 100, []member{{m, left}}, []float64{1}); ok && f.duty > 0 {
					occ = f.busy / f.duty
				}
			}
			res = append(res, residue{m, left, occ})
		}
	}
	slices.SortStableFunc(res, func(a, b residue) int { return cmp.Compare(b.occ, a.occ) })
	for _, r := range res {
		if s.bestFit(r.m, r.rate) {
			continue
		}
		if gi, _ := s.freeWhole(r.m); gi >= 0 {
			if got, nl, fits := e.maxAdd(s.gpus[gi].rt, []letSpec{{size: 100}}, 0, r.m, r.rate); got > 0 {
				s.commit(gi, nl, fits, r.m, got)
				if got >= r.rate*(1-relTol) {
					continue
				}
			}
		}
		for range maxSteps {
			left := r.m.rate - s.assigned[r.m]
			if left <= r.m.rate*relTol || !s.mostOf(r.m, left) {
				break
			}
		}
		if left := r.m.rate - s.assigned[r.m]; left > r.m.rate*relTol {
			s.reasons[r.m] = s.whyLeft(r.m, left)
		}
	}
	return s
}

// freeWhole returns the first GPU with no gpu-let that can run m, and m's
// affordable rate on a whole GPU of its type; -1 when none is free.
func (s *state) freeWhole(m *model) (int, float64) {
	for gi, g := range s.gpus {
		if len(g.lets) > 0 || m.profs[g.rt.typ] == nil || !g.rt.layoutOK([]int{100}) {
			continue
		}
		if t := m.tab(g.rt.typ, 100); t != nil && t.fits1 && m.mem <= g.rt.letMemory(100) {
			return gi, t.cap
		}
	}
	return -1, 0
}

// bestFit puts all of rate on the used whole GPU where it fits with the
// highest resulting occupancy.
func (s *state) bestFit(m *model, rate float64) bool {
	best, bestGPU := -1.0, -1
	var bestL []letSpec
	var bestF []letFit
	for gi, g := range s.gpus {
		if len(g.lets) != 1 {
			continue
		}
		lets := withMember(g.lets, 0, m, rate)
		if !g.rt.memoryOK(lets) {
			continue
		}
		fits, ok := s.e.evalGPU(g.rt, lets)
		if !ok || fits[0].duty <= 0 {
			continue
		}
		if occ := fits[0].busy / fits[0].duty; occ > best {
			best, bestGPU, bestL, bestF = occ, gi, lets, fits
		}
	}
	if bestGPU < 0 {
		return false
	}
	s.commit(bestGPU, bestL, bestF, m, rate)
	return true
}

// mostOf puts as much of left as one used GPU can take on the one that
// takes the most.
func (s *state) mostOf(m *model, left float64) bool {
	best, bestGPU := 0.0, -1
	var bestL []letSpec
	var bestF []letFit
	for gi, g := range s.gpus {
		if len(g.lets) != 1 {
			continue
		}
		if r, nl, fits := s.e.maxAdd(g.rt, g.lets, 0, m, left); r > best {
			best, bestGPU, bestL, bestF = r, gi, nl, fits
		}
	}
	if bestGPU < 0 {
		return false
	}
	s.commit(bestGPU, bestL, bestF, m, best)
	return true
}
