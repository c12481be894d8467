package gpulet

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// gstate is one GPU being planned: its gpu-lets in creation order and their
// schedules.
type gstate struct {
	rt   *gpuRT
	lets []letSpec
	fits []letFit
}

func (g *gstate) sizes() []int { return sizesOf(g.lets) }

// letRef names an allocated gpu-let.
type letRef struct{ gpu, let int }

// state is a plan under construction.
type state struct {
	e        *env
	gpus     []*gstate
	alloc    []letRef           // allocated gpu-lets in creation order
	assigned map[*model]float64 // rate placed per model
	reasons  map[*model]string  // why rate was left over
}

func newState(e *env) *state {
	s := &state{e: e, assigned: map[*model]float64{}, reasons: map[*model]string{}}
	for _, g := range e.gpus {
		s.gpus = append(s.gpus, &gstate{rt: g})
	}
	return s
}

// commit replaces a GPU's gpu-lets by a feasible new set, recording new
// gpu-lets in allocation order, and adds rate to a model's placed rate.
func (s *state) commit(gi int, lets []letSpec, fits []letFit, m *model, rate float64) {
	g := s.gpus[gi]
	for i := len(g.lets); i < len(lets); i++ {
		s.alloc = append(s.alloc, letRef{gi, i})
	}
	g.lets, g.fits = lets, fits
	s.assigned[m] += rate
}

// left is the rate still to place, per model index.
func (s *state) left() []float64 {
	out := make([]float64, len(s.e.models))
	for i, m := range s.e.models {
		out[i] = max(0, m.rate-s.assigned[m])
	}
	return out
}

// plan turns the state into a Plan: leftover rate of every model becomes
// unscheduled with its reason.
func (s *state) plan(algo Algo) *Plan {
	e := s.e
	p := &Plan{Algo: algo, Unscheduled: maps.Clone(e.unsched), Reasons: maps.Clone(e.reasons)}
	planned := map[string]bool{}
	for _, m := range e.models {
		planned[m.name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(e.unsched)) {
		if !planned[name] { // a name given twice has its first demand planned
			p.Unplaceable = append(p.Unplaceable, name)
		}
	}
	for _, g := range s.gpus {
		gp := GPUPlan{ID: g.rt.g.ID, Type: g.rt.g.Type, Backend: g.rt.g.Backend, MemoryMB: g.rt.g.MemoryMB, GPULets: []GPULet{}}
		var migPl []string
		var migStarts []int
		if g.rt.mig != nil && len(g.lets) > 0 {
			if pl, err := g.rt.migPlace(g.sizes()); err == nil {
				for _, x := range pl {
					migPl = append(migPl, x.Profile)
					migStarts = append(migStarts, x.Start)
				}
			}
		}
		for i, l := range g.lets {
			if len(l.members) == 0 {
				continue
			}
			f := g.fits[i]
			gl := GPULet{Size: l.size, DutyMS: f.duty, Models: []Placement{}}
			if f.duty > 0 {
				gl.Occupancy = f.busy / f.duty
			}
			if migPl != nil {
				gl.MIGProfile, gl.MIGStart = migPl[i], migStarts[i]
			}
			for j, mb := range l.members {
				mf := f.members[j]
				procs := 0
				if n := mb.m.procs(g.rt.typ, mf.batch, l.size); n > 1 {
					procs = n
				}
				gl.Models = append(gl.Models, Placement{
					Name: mb.m.name, Batch: mf.batch, Rate: mb.rate, Procs: procs,
					LatencyMS: mf.solo * mf.factor, SoloMS: mf.solo, Factor: mf.factor,
					WorstMS: f.duty + mf.solo*mf.factor, SLOMS: mb.m.slo, MemoryMB: mb.m.mem,
				})
			}
			gp.GPULets = append(gp.GPULets, gl)
		}
		gp.MemoryUsedMB = s.memoryUsed(g)
		p.GPUs = append(p.GPUs, gp)
	}
	for _, m := range e.models {
		left := m.rate - s.assigned[m]
		if left > m.rate*1e-6 {
			p.Unscheduled[m.name] += left
			why := s.reasons[m]
			if why == "" {
				why = "no gpu-let left that can take it"
			}
			p.Reasons[m.name] = why
		}
	}
	p.Schedulable = len(p.Unscheduled) == 0
	if len(p.Reasons) == 0 {
		p.Reasons = nil
	}
	return p
}

// describeLeft explains leftover rate of a model.
func describeLeft(rate float64, ngpus int) string {
	return fmt.Sprintf("%.4g req/s left over: no gpu-let of %s can take more of it within its SLO, memory and interference limits", rate, theDevices(ngpus))
}

// whyLeft explains the leftover rate of model m: describeLeft, or, when m
// has no place yet, either that no device it could run on has the memory
// left for one more copy of it, with each device's memory left (an MPS or
// CPU device's, over its gpu-lets; a MIG GPU's instances are sized apart,
// so with one the general words stand), or that every gpu-let it could
// share would break an SLO (whyNoShare).
func (s *state) whyLeft(m *model, rate float64) string {
	if s.assigned[m] > 0 {
		return describeLeft(rate, len(s.gpus))
	}
	var free []string
	for _, g := range s.gpus {
		if m.profs[g.rt.typ] == nil {
			continue
		}
		if g.rt.mig != nil {
			return describeLeft(rate, len(s.gpus))
		}
		left := g.rt.g.MemoryMB - s.memoryUsed(g)
		if m.mem <= left+1e-9 {
			if why := s.whyNoShare(m, rate); why != "" {
				return why
			}
			return describeLeft(rate, len(s.gpus))
		}
		free = append(free, fmt.Sprintf("%s %.0f of %.0f MB", g.rt.g.ID, max(left, 0), g.rt.g.MemoryMB))
	}
	if len(free) == 0 {
		return describeLeft(rate, len(s.gpus))
	}
	return fmt.Sprintf("%.4g req/s left over: no device has the memory left for a copy of it (it needs %.0f MB; free beside the models placed: %s)",
		rate, m.mem, strings.Join(free, ", "))
}

// memoryUsed is what the models placed on g need, one copy per process
// (as Plan's MemoryUsedMB).
func (s *state) memoryUsed(g *gstate) float64 {
	used := 0.0
	for i, l := range g.lets {
		for j, mb := range l.members {
			procs := 1
			if i < len(g.fits) && j < len(g.fits[i].members) {
				procs = max(mb.m.procs(g.rt.typ, g.fits[i].members[j].batch, l.size), 1)
			}
			used += float64(procs) * mb.m.mem
		}
	}
	return used
}

// theDevices names n devices: GPUs, or the CPU device a node without GPUs
// plans for.
func theDevices(n int) string {
	if n == 1 {
		return "the node's one device"
	}
	return fmt.Sprintf("the node's %d devices", n)
}
