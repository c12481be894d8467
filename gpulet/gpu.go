package gpulet

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/gpulet/gpuletd/gpulet/migrules"
)

// newGPU validates one GPU and fills its defaults.
func newGPU(g GPU, i int) (*gpuRT, error) {
	bad := func(why string, args ...any) error {
		return fmt.Errorf("plan: %w: GPU %d (%q): %s", ErrBadInput, i+1, g.ID, fmt.Sprintf(why, args...))
	}
	switch {
	case g.ID == "":
		return nil, bad("no id")
	case g.Type == "":
		return nil, bad("no device type")
	case !(g.MemoryMB > 0) || math.IsInf(g.MemoryMB, 0):
		return nil, bad("memory %v MB: must be positive and finite", g.MemoryMB)
	case g.MaxGPULets < 0:
		return nil, bad("max gpu-lets %d: must be ≥ 0 (0 means %d)", g.MaxGPULets, DefaultMaxGPULets)
	}
	rt := &gpuRT{g: g, idx: i, max: g.MaxGPULets}
	if rt.max == 0 {
		rt.max = DefaultMaxGPULets
	}
	switch g.Backend {
	case BackendMPS, "":
		rt.g.Backend = BackendMPS
		rt.sizes = sortedUnique(g.Sizes)
		if len(rt.sizes) == 0 {
			rt.sizes = slices.Clone(DefaultMPSSizes)
		}
		for _, s := range rt.sizes {
			if s < 1 || s > 100 {
				return nil, bad("size %d: must be in 1..100", s)
			}
		}
	case BackendMIG:
		name := g.MIGModel
		if name == "" {
			name = g.Type
		}
		t, err := migrules.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("plan: %w: GPU %d (%q): %w", ErrBadInput, i+1, g.ID, err)
		}
		rt.mig = &t
		rt.sizes = sortedUnique(g.Sizes)
		if len(rt.sizes) == 0 {
			rt.sizes = t.Sizes()
		}
		for _, s := range rt.sizes {
			if _, err := t.ProfileForSize(s); err != nil {
				return nil, fmt.Errorf("plan: %w: GPU %d (%q): %w", ErrBadInput, i+1, g.ID, err)
			}
		}
	case BackendNone:
		rt.sizes, rt.max = []int{100}, 1
	default:
		return nil, bad("backend %q: allowed mps, mig, none", g.Backend)
	}
	return rt, nil
}

// letMemory is the memory the models of one gpu-let of this size may use:
// the MIG instance's share of the GPU's memory (its memory slots), or the
// whole GPU for MPS, where gpuMemoryOK checks the sum over gpu-lets.
func (g *gpuRT) letMemory(size int) float64 {
	if g.mig == nil {
		return g.g.MemoryMB
	}
	p, err := g.mig.ProfileForSize(size)
	if err != nil {
		return 0
	}
	return g.g.MemoryMB * float64(p.Size) / float64(g.mig.MemorySlots)
}

// layoutOK says whether gpu-lets of these sizes can be made together.
func (g *gpuRT) layoutOK(sizes []int) bool {
	if len(sizes) > g.max {
		return false
	}
	if g.mig != nil {
		_, err := g.migPlace(sizes)
		return err == nil
	}
	sum := 0
	for _, s := range sizes {
		sum += s
	}
	return sum <= 100
}

// migPlace places MIG instances of these sizes, in their order.
func (g *gpuRT) migPlace(sizes []int) ([]migrules.Placement, error) {
	names := make([]string, len(sizes))
	for i, s := range sizes {
		p, err := g.mig.ProfileForSize(s)
		if err != nil {
			return nil, err
		}
		names[i] = strconv.Itoa(p.Slices) + "g"
	}
	return g.mig.Place(names, nil)
}

// remainder is the largest allowed size that can join gpu-lets of these
// sizes, 0 when none can.
func (g *gpuRT) remainder(sizes []int) int {
	for i := len(g.sizes) - 1; i >= 0; i-- {
		if g.layoutOK(append(slices.Clone(sizes), g.sizes[i])) {
			return g.sizes[i]
		}
	}
	return 0
}

// splitRest is the size left beside a gpu-let of size p cut from a whole
// GPU by SPLIT: the largest allowed size that fits beside it (100−p when
// that is allowed), 0 when none does.
func (g *gpuRT) splitRest(p int) int { return g.remainder([]int{p}) }

// memoryOK checks the memory of a GPU's gpu-lets, one copy of each
// member's model: per MIG instance, or the sum over the GPU. It is the
// quick test before a schedule is searched; procsMemoryOK counts the
// copies the schedule's batches need.
func (g *gpuRT) memoryOK(lets []letSpec) bool {
	return g.memoryFits(lets, func(int, int) int { return 1 })
}

// procsMemoryOK is memoryOK with every process counted: a member whose
// batch runs as n MPS processes inside its gpu-let (Profile.Procs, from a
// profile measured that way) loads its model n times.
func (g *gpuRT) procsMemoryOK(lets []letSpec, fits []letFit) bool {
	return g.memoryFits(lets, func(i, j int) int {
		return lets[i].members[j].m.procs(g.typ, fits[i].members[j].batch, lets[i].size)
	})
}

// memoryFits checks the memory of a GPU's gpu-lets with copies(i, j)
// copies of member j of gpu-let i loaded.
func (g *gpuRT) memoryFits(lets []letSpec, copies func(i, j int) int) bool {
	total := 0.0
	for i, l := range lets {
		sum := 0.0
		for j, mb := range l.members {
			sum += float64(copies(i, j)) * mb.m.mem
		}
		if g.mig != nil && sum > g.letMemory(l.size)+1e-9 {
			return false
		}
		total += sum
	}
	return total <= g.g.MemoryMB+1e-9
}
