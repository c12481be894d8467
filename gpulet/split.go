package gpulet

// When SPLIT pays.
//
// Algorithm 1 splits a whole GPU whenever p_ideal is below 100%. A gpu-let
// of p% serves more per percent of GPU than a whole one when the model's
// affordable rate grows less than linearly with p (the reason gpu-lets
// exist), but the gpu-let beside it slows it down: on iGniter's V100 the
// measured slowdowns of co-located pairs are 1.0-1.3 (refset tests), as
// large as the gains of a smaller gpu-let (5-20% per percent for the four
// models). Splitting then costs capacity and fragments the GPU; on the
// iGniter benchmarks always splitting made gpulet-int schedule 225 of the
// 255 scenarios ideal schedules at the paper's rate levels and 70% of
// ideal's maximum rate on average (docs/BENCHMARKS.md, "Planner").
//
// So a whole GPU is split into p_ideal only when that gpu-let, slowed as a
// copy of its own model running at capacity on the rest of the GPU would
// slow it (the interference model's prediction; no slowdown for gpulet,
// MIG or no model), still serves more per percent than the whole GPU
// serves the model alone (splitPays), or when the model's last residue
// fits in p_ideal whole (elastic.go, where the conditions on the rate left
// and the rate the split gpu-let is given are).

// selfFactor is the slowdown of m on a gpu-let of size p of g when a copy of
// m runs at capacity on the rest of the GPU.
func (e *env) selfFactor(m *model, g *gpuRT, p int) float64 {
	if e.pred == nil || g.mig != nil {
		return 1
	}
	rest := g.splitRest(p)
	if rest == 0 {
		return 1
	}
	t, tr := m.tab(g.typ, p), m.tab(g.typ, rest)
	if t == nil || tr == nil || t.capB == 0 || tr.capB == 0 {
		return 1
	}
	return e.factor(g.typ, m, t.capB, p, m, tr.capB, rest)
}

// capWith is the affordable rate of a table when every batch is slowed by f.
func capWith(t *table, m *model, f float64) float64 {
	best := 0.0
	for b := 1; b <= t.maxB; b++ {
		l := t.lat[b] * f
		if m.alone(l) {
			best = max(best, 1000*float64(b)/l)
		}
	}
	return best
}

// splitPays says whether a gpu-let of size p of g serves m more per percent,
// with a neighbour like itself, than g's largest gpu-let serves it alone.
func (e *env) splitPays(m *model, g *gpuRT, p int) bool {
	whole := g.sizes[len(g.sizes)-1]
	tw, t := m.tab(g.typ, whole), m.tab(g.typ, p)
	if tw == nil || tw.cap == 0 {
		return true
	}
	if t == nil {
		return false
	}
	return e.splitCapacity(m, g, p)/float64(p) > tw.cap/float64(whole)
}

// splitCapacity is the affordable rate of m on a gpu-let of size p of g with
// a copy of itself on the rest of the GPU.
func (e *env) splitCapacity(m *model, g *gpuRT, p int) float64 {
	t := m.tab(g.typ, p)
	if t == nil {
		return 0
	}
	return capWith(t, m, e.selfFactor(m, g, p))
}
