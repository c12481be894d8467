package gpulet

import (
	"cmp"
	"slices"
)

// Elastic partitioning, the gpu-let paper's Algorithm 1 (section 4.3). The
// choices the paper leaves open, as made here:
//
//   - Order: models by rate, descending (line 3 of the algorithm), ties by
//     name. The authors' released code sorts by rate × SLO instead; by rate
//     is kept because the largest loads are then placed while whole GPUs
//     are still free, and a large load is what needs the best fits — a
//     long-SLO model with a small rate is easy to merge anywhere later. On
//     the iGniter schedulability benchmark the two orders were measured
//     (docs/BENCHMARKS.md, "Planner").
//   - p_req = MINREQUIREDPARTITION is computed for the rate still
//     unassigned, not the model's whole rate, so the last gpu-let of a model
//     is sized to its residue: the smallest allowed size whose affordable
//     rate covers it (the size with the largest affordable rate when none
//     does).
//   - p_eff is Knee over the GPU's allowed sizes; p_ideal = min(p_eff,
//     p_req).
//   - FINDBESTFIT walks the free gpu-lets by size, ascending (a GPU with no
//     gpu-let counts as one of its largest size; a GPU with gpu-lets offers
//     its remainder, the largest allowed size that still fits beside them),
//     ties by GPU order, and takes the first with size ≥ p_ideal that can
//     serve some of the rate. A whole GPU is SPLIT into p_ideal and the rest;
//     a remainder is used whole unless the GPU may hold more gpu-lets than
//     it would then have (MaxGPULets > 2), in which case it is split too.
//   - SPLIT happens only when it pays (split.go): the p_ideal gpu-let,
//     slowed as a neighbour like itself would slow it, must serve more per
//     percent than the whole GPU. When it does, a model above its knee
//     gpu-let's capacity keeps getting knee-sized gpu-lets, as Algorithm 1
//     does, with or without interference (an earlier version gave such a
//     model whole GPUs under gpulet-int; on igniter-v100 both give the same
//     schedulability and max rates, docs/BENCHMARKS.md "Planner"). A split
//     gpu-let is given at most its slowed capacity, leaving its future
//     neighbour room for the slowdown it will cause. A residue that fits in
//     p_req (p_ideal = p_req, the rest of the model's rate served there
//     beside a copy of itself) is split off even where splitting does not
//     pay per percent: the model loses nothing by it, and the rest of the
//     GPU stays free for other models instead of going to a residue whose
//     duty cycle they may not share. On MIG always (isolated instances; on
//     the parvagpu-a100 scenarios it saved a GPU in two of the six,
//     docs/BENCHMARKS.md "GPUs needed"); on MPS only in a second pass, when
//     the first leaves rate unplaced (Run): a residue's size follows its
//     rate, so every rate change would start a new gpu-let where a whole
//     GPU only takes another rate (in the simulator a single model's surge
//     lost 28% of its requests so, against 13%), while without it a small model
//     with a 5 ms SLO took a whole CPU device and left no room for a model
//     whose batches take 18 ms. On igniter-v100 the second pass lifts the
//     equal mix's max rate from 0.946 to 0.997 of ideal ("Planner"). A
//     later neighbour on MPS is checked against the slowdowns both ways
//     (maxAdd), as any other. The residue's size is the smallest allowed
//     one from p_req up that serves it beside a copy of itself
//     (residueSize): p_req counts no neighbour, and alexnet at a 3 ms SLO on
//     an iGniter V100, which meets it alone at p_req but not once slowed,
//     took the whole GPU there and left two 100 ms models without a place.
//   - The rate given to the gpu-let is the most it can serve, at most the
//     rate left: with interference, the most that keeps every model on the
//     GPU — the new one and those already there — within its SLO under the
//     predicted slowdowns (gpulet-int); the gpu-let is passed over when that
//     is nothing. This is the paper's "L(b)·intf ≤ SLO" check, applied to
//     both sides of the co-location.
//   - MERGE: the gpu-lets already allocated are tried in allocation order;
//     the first that can take the whole of that rate by temporal sharing
//     (every co-resident model still within its SLO with the longer duty
//     cycle, memory and interference included) takes it and the split is
//     reverted (REVERTSPLIT): the new gpu-let is never made.
//   - When no free gpu-let can take any of the rate (the node is full), the
//     residue goes, as much as fits, to the allocated gpu-let that can take
//     the most; what is still left is reported unscheduled.
type elastic struct {
	*state
	// splitResidues splits residues off MPS GPUs too (MIG GPUs always).
	splitResidues bool
}

// maxSteps bounds the gpu-lets one model may be given, a guard against a
// loop that makes no progress.
const maxSteps = 1 << 10

func runElastic(e *env, byRateSLO, splitResidues bool) *state {
	p := &elastic{state: newState(e), splitResidues: splitResidues}
	order := slices.Clone(e.models)
	key := func(m *model) float64 {
		if byRateSLO {
			return m.rate * m.slo
		}
		return m.rate
	}
	slices.SortStableFunc(order, func(a, b *model) int {
		if c := cmp.Compare(key(b), key(a)); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	for _, m := range order {
		for range maxSteps {
			left := m.rate - p.assigned[m]
			if left <= m.rate*relTol {
				break
			}
			if !p.step(m, left) {
				p.reasons[m] = p.whyLeft(m, left)
				break
			}
		}
	}
	return p.state
}

// freeLet is a gpu-let FINDBESTFIT may take: a whole GPU or the remainder
// beside a GPU's gpu-lets.
type freeLet struct {
	gpu   int
	size  int
	whole bool
}

// step places some of model m's left rate; false when nothing could be
// placed.
func (p *elastic) step(m *model, left float64) bool {
	var free []freeLet
	for gi, g := range p.gpus {
		if m.profs[g.rt.typ] == nil {
			continue
		}
		if len(g.lets) == 0 {
			free = append(free, freeLet{gi, g.rt.sizes[len(g.rt.sizes)-1], true})
		} else if r := g.rt.remainder(g.sizes()); r > 0 {
			free = append(free, freeLet{gi, r, false})
		}
	}
	slices.SortStableFunc(free, func(a, b freeLet) int { return cmp.Compare(a.size, b.size) })
	for _, c := range free {
		g := p.gpus[c.gpu]
		req := p.e.minRequired(m, g.rt, left)
		ideal := min(m.knee(g.rt), req)
		if c.size < ideal {
			continue
		}
		size := c.size
		residue := false // the rest of the model's rate, split off where it serves it
		if ideal == req && (g.rt.mig != nil || p.splitResidues) {
			ideal = p.e.residueSize(m, g.rt, left, ideal, c.size)
			residue = left <= p.e.splitCapacity(m, g.rt, ideal)
		}
		if ideal < c.size && (residue || p.e.splitPays(m, g.rt, ideal)) {
			cur := g.sizes()
			if (c.whole && g.rt.max >= 2) || (!c.whole && len(cur)+2 <= g.rt.max) {
				if g.rt.remainder(append(cur, ideal)) > 0 {
					size = ideal // SPLIT
				}
			}
		}
		want := left
		if size < c.size {
			// A split gpu-let takes the rate the split was judged on: its
			// capacity beside a neighbour like itself, so the neighbour that
			// comes later finds room for the slowdown it causes.
			want = min(want, p.e.splitCapacity(m, g.rt, size))
		}
		lets := append(slices.Clone(g.lets), letSpec{size: size})
		if !g.rt.layoutOK(sizesOf(lets)) {
			continue
		}
		rate, nl, fits := p.e.maxAdd(g.rt, lets, len(lets)-1, m, want)
		if rate <= 0 {
			continue
		}
		if p.merge(m, rate) {
			return true // REVERTSPLIT: the new gpu-let is dropped
		}
		p.commit(c.gpu, nl, fits, m, rate)
		return true
	}
	return p.residue(m, left)
}

// merge puts rate of m on the first allocated gpu-let that takes all of it.
func (p *elastic) merge(m *model, rate float64) bool {
	for _, ref := range p.alloc {
		g := p.gpus[ref.gpu]
		lets := withMember(g.lets, ref.let, m, rate)
		if !g.rt.memoryOK(lets) {
			continue
		}
		if fits, ok := p.e.evalGPU(g.rt, lets); ok {
			p.commit(ref.gpu, lets, fits, m, rate)
			return true
		}
	}
	return false
}

// residue places as much of left as one allocated gpu-let can take, on the
// one that takes the most.
func (p *elastic) residue(m *model, left float64) bool {
	best := 0.0
	var bestRef letRef
	var bestL []letSpec
	var bestF []letFit
	for _, ref := range p.alloc {
		g := p.gpus[ref.gpu]
		r, nl, fits := p.e.maxAdd(g.rt, g.lets, ref.let, m, left)
		if r > best {
			best, bestRef, bestL, bestF = r, ref, nl, fits
		}
	}
	if best <= 0 {
		return false
	}
	p.commit(bestRef.gpu, bestL, bestF, m, best)
	return true
}

// residueSize is the size a residue of left requests/s of m is split off
// at on g: the smallest allowed size from req up, below free (the gpu-let
// it is cut from), that serves it beside a copy of itself, or req when
// none does. MINREQUIREDPARTITION (req) counts no neighbour, and a model
// whose batch of one barely meets its SLO alone meets it at req with none
// of the slowdown a neighbour brings: split there it serves nothing, and
// the residue took the whole GPU, leaving no room for any other model.
func (e *env) residueSize(m *model, g *gpuRT, left float64, req, free int) int {
	for _, s := range g.sizes {
		if s >= req && s < free && left <= e.splitCapacity(m, g, s) {
			return s
		}
	}
	return req
}

// minRequired is MINREQUIREDPARTITION: the smallest allowed size of g whose
// affordable rate covers rate, or the largest size when none does.
func (e *env) minRequired(m *model, g *gpuRT, rate float64) int {
	whole := g.sizes[len(g.sizes)-1]
	for _, s := range g.sizes[:len(g.sizes)-1] {
		if t := m.tab(g.typ, s); t != nil && t.cap >= rate {
			return s
		}
	}
	return whole
}

func sizesOf(lets []letSpec) []int {
	out := make([]int, len(lets))
	for i, l := range lets {
		out[i] = l.size
	}
	return out
}
