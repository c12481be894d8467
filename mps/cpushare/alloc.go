package cpushare

import (
	"fmt"
	"slices"
	"sync"
)

// Allocator hands out disjoint sets of cores from a fixed pool, so that two
// CPU gpu-lets share no core, but while one started over others takes
// their cores over as they stop. It is safe for concurrent use.
type Allocator struct {
	mu    sync.Mutex
	cpus  []int          // the pool, ascending
	owner map[int]string // core → owner, for allocated cores
}

// NewAllocator makes an allocator over the given cores (e.g. from Online).
func NewAllocator(cpus []int) *Allocator {
	c := slices.Clone(cpus)
	slices.Sort(c)
	return &Allocator{cpus: slices.Compact(c), owner: map[int]string{}}
}

// Cores is the pool, ascending.
func (a *Allocator) Cores() []int { return slices.Clone(a.cpus) }

// Allocate takes the cores a size in percent of the pool maps to (see
// CoresForSize), lowest free cores first, and records owner for them. When
// free cores fall short, it takes the highest cores the owners named in
// from hold: a gpu-let started over gpu-lets that are about to stop shares
// those cores with them until they do, and keeps them after (their
// Release leaves cores they no longer own).
func (a *Allocator) Allocate(owner string, size int, from ...string) ([]int, error) {
	k, err := CoresForSize(size, len(a.cpus))
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var got, theirs []int
	for _, c := range a.cpus {
		o, taken := a.owner[c]
		switch {
		case !taken && len(got) < k:
			got = append(got, c)
		case taken && slices.Contains(from, o):
			theirs = append(theirs, c)
		}
	}
	slices.Reverse(theirs)
	for _, c := range theirs {
		if len(got) == k {
			break
		}
		got = append(got, c)
	}
	if len(got) < k {
		return nil, fmt.Errorf("allocate %d core(s) for %s (%d%%): %w: %d of %d free", k, owner, size, ErrNoFreeCores, len(got), len(a.cpus))
	}
	slices.Sort(got)
	for _, c := range got {
		a.owner[c] = owner
	}
	return got, nil
}

// Borrow names the cores a size maps to without taking them: the free ones
// first, then the highest taken ones (the lowest are the first gpu-lets').
// Nothing is recorded, so nothing is released.
func (a *Allocator) Borrow(size int) ([]int, error) {
	k, err := CoresForSize(size, len(a.cpus))
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var free, taken []int
	for _, c := range a.cpus {
		if _, ok := a.owner[c]; ok {
			taken = append(taken, c)
		} else {
			free = append(free, c)
		}
	}
	slices.Reverse(taken)
	got := append(free, taken...)[:k]
	slices.Sort(got)
	return got, nil
}

// Release gives back the cores of cores that owner still holds; cores
// another owner took over (Allocate's from) or never allocated are left.
func (a *Allocator) Release(owner string, cores []int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range cores {
		if a.owner[c] == owner {
			delete(a.owner, c)
		}
	}
}

// Free lists the unallocated cores, ascending.
func (a *Allocator) Free() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []int
	for _, c := range a.cpus {
		if _, taken := a.owner[c]; !taken {
			out = append(out, c)
		}
	}
	return out
}
