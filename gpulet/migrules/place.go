package migrules

import (
	"cmp"
	"fmt"
	"slices"
)

// Placement is one GPU instance at a position: Size memory slots from Start.
type Placement struct {
	// Profile is the profile's full name, e.g. "3g.40gb".
	Profile string
	// Start is the first memory slot.
	Start int
	// Size is the number of memory slots.
	Size int
}

// Slots is the set of memory slots a placement occupies, a bit each.
func (p Placement) Slots() uint64 {
	return (uint64(1)<<p.Size - 1) << p.Start
}

// Place finds a position for every wanted profile (full names or bare slice
// counts) beside the instances already fixed on the GPU, or says why there is
// none (ErrInfeasible, ErrUnknownProfile). The result is in the order of want.
// The search is exhaustive: ErrInfeasible means no layout exists, not that
// a greedy pass missed one.
func (g GPU) Place(want []string, fixed []Placement) ([]Placement, error) {
	profiles := make([]Profile, len(want))
	for i, name := range want {
		p, err := g.Profile(name)
		if err != nil {
			return nil, err
		}
		profiles[i] = p
	}
	fail := func(why string, args ...any) error {
		return fmt.Errorf("place %v on %s: %w: %s", want, g.Model, ErrInfeasible, fmt.Sprintf(why, args...))
	}

	var used uint64
	all := uint64(1)<<g.MemorySlots - 1
	count := map[string]int{}
	slicesUsed := 0
	for _, f := range fixed {
		p, err := g.Profile(f.Profile)
		if err != nil {
			return nil, err
		}
		m := f.Slots()
		if f.Start < 0 || f.Size <= 0 || m&^all != 0 || used&m != 0 {
			return nil, fail("existing instance %s at %d+%d overlaps another or lies outside %d slots", f.Profile, f.Start, f.Size, g.MemorySlots)
		}
		used |= m
		count[p.Name()]++
		slicesUsed += p.Slices
	}
	for _, p := range profiles {
		slicesUsed += p.Slices
		count[p.Name()]++
		if p.MaxCount > 0 && count[p.Name()] > p.MaxCount {
			return nil, fail("at most %d instance(s) of %s", p.MaxCount, p.Name())
		}
	}
	if slicesUsed > g.ComputeSlices {
		return nil, fail("needs %d compute slices, the GPU has %d", slicesUsed, g.ComputeSlices)
	}

	// Largest first, then the most constrained: a small search tree.
	order := make([]int, len(profiles))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		pa, pb := profiles[a], profiles[b]
		if c := cmp.Compare(pb.Size, pa.Size); c != 0 {
			return c
		}
		return cmp.Compare(len(pa.Starts), len(pb.Starts))
	})

	out := make([]Placement, len(profiles))
	var search func(k int, used uint64) bool
	search = func(k int, used uint64) bool {
		if k == len(order) {
			return true
		}
		i := order[k]
		p := profiles[i]
		for _, s := range p.Starts {
			pl := Placement{Profile: p.Name(), Start: s, Size: p.Size}
			m := pl.Slots()
			if m&^all != 0 || used&m != 0 {
				continue
			}
			out[i] = pl
			if search(k+1, used|m) {
				return true
			}
		}
		return false
	}
	if !search(0, used) {
		return nil, fail("no free placement for every instance (memory slots in use: %08b)", used)
	}
	return out, nil
}
