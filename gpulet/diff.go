package gpulet

import (
	"slices"
	"strings"
)

// Action is what the daemon does with one gpu-let when it moves from one
// plan to the next.
type Action string

// Actions of a PlanDiff.
const (
	// ActionStart: a gpu-let the old plan lacks; start its executor (load
	// and warm up) before the router switches.
	ActionStart Action = "start"
	// ActionStop: a gpu-let the new plan lacks; drain and stop it after the
	// router switched.
	ActionStop Action = "stop"
	// ActionResize: the same models on the same GPU with another size (or
	// MIG instance): a new executor beside the old one, then drain the old.
	ActionResize Action = "resize"
	// ActionKeep: the same size (and MIG instance) and models on the same
	// GPU; the executor stays and only takes new batch sizes and rates
	// (Retune says whether any changed).
	ActionKeep Action = "keep"
)

// Change is one gpu-let's fate.
type Change struct {
	Action Action `json:"action"`
	GPU    string `json:"gpu"`
	// OldIndex and NewIndex locate the gpu-let in the GPU's GPULets of the
	// old and new plan, -1 where it has none.
	OldIndex int     `json:"old_index"`
	NewIndex int     `json:"new_index"`
	Old      *GPULet `json:"old,omitempty"`
	New      *GPULet `json:"new,omitempty"`
	// Retune is set on a kept gpu-let whose batches or rates change.
	Retune bool `json:"retune,omitempty"`
}

// PlanDiff lists the changes from one plan to the next, in the order the
// daemon applies them: start and resize first (new executors beside the
// old), then keep, then stop (after the router switched).
type PlanDiff struct {
	Changes []Change `json:"changes"`
}

// Count returns how many changes have the action.
func (d PlanDiff) Count(a Action) int {
	n := 0
	for _, c := range d.Changes {
		if c.Action == a {
			n++
		}
	}
	return n
}

// Unchanged reports whether the new plan runs exactly what the old one
// does: every gpu-let kept, with the same batches and rates.
func (d PlanDiff) Unchanged() bool {
	for _, c := range d.Changes {
		if c.Action != ActionKeep || c.Retune {
			return false
		}
	}
	return true
}

// Diff compares two plans GPU by GPU (by id). On one GPU a new gpu-let keeps
// an old one with the same size, MIG instance and set of models; failing
// that it resizes an old one with the same set of models; every other new
// gpu-let is started and every other old one stopped. A nil old plan starts
// everything; a nil new plan stops everything.
func Diff(old, next *Plan) PlanDiff {
	byID := func(p *Plan) (map[string]GPUPlan, []string) {
		m := map[string]GPUPlan{}
		var ids []string
		if p == nil {
			return m, nil
		}
		for _, g := range p.GPUs {
			if _, dup := m[g.ID]; !dup {
				ids = append(ids, g.ID)
			}
			m[g.ID] = g
		}
		return m, ids
	}
	om, oids := byID(old)
	nm, nids := byID(next)
	ids := slices.Clone(nids)
	for _, id := range oids {
		if _, ok := nm[id]; !ok {
			ids = append(ids, id)
		}
	}
	var first, keep, last []Change
	for _, id := range ids {
		o, n := om[id].GPULets, nm[id].GPULets
		usedO := make([]bool, len(o))
		matched := make([]int, len(n))
		for i := range matched {
			matched[i] = -1
		}
		match := func(same func(a, b GPULet) bool) {
			for j := range n {
				if matched[j] >= 0 {
					continue
				}
				for i := range o {
					if !usedO[i] && same(o[i], n[j]) {
						usedO[i], matched[j] = true, i
						break
					}
				}
			}
		}
		match(func(a, b GPULet) bool { return sameInstance(a, b) && sameModels(a, b) })
		exact := slices.Clone(matched)
		match(sameModels)
		for j := range n {
			nl := n[j]
			switch i := matched[j]; {
			case i < 0:
				first = append(first, Change{Action: ActionStart, GPU: id, OldIndex: -1, NewIndex: j, New: &nl})
			case exact[j] >= 0:
				ol := o[i]
				keep = append(keep, Change{Action: ActionKeep, GPU: id, OldIndex: i, NewIndex: j, Old: &ol, New: &nl, Retune: !sameSchedule(ol, nl)})
			default:
				ol := o[i]
				first = append(first, Change{Action: ActionResize, GPU: id, OldIndex: i, NewIndex: j, Old: &ol, New: &nl})
			}
		}
		for i := range o {
			if !usedO[i] {
				ol := o[i]
				last = append(last, Change{Action: ActionStop, GPU: id, OldIndex: i, NewIndex: -1, Old: &ol})
			}
		}
	}
	return PlanDiff{Changes: append(append(first, keep...), last...)}
}

func sameInstance(a, b GPULet) bool {
	return a.Size == b.Size && a.MIGProfile == b.MIGProfile && a.MIGStart == b.MIGStart
}

func modelKey(l GPULet) string {
	names := make([]string, len(l.Models))
	for i, m := range l.Models {
		names[i] = m.Name
	}
	slices.Sort(names)
	return strings.Join(names, "\x00")
}

func sameModels(a, b GPULet) bool { return modelKey(a) == modelKey(b) }

// sameSchedule says whether two gpu-lets with the same models run the same
// batches at the same rates.
func sameSchedule(a, b GPULet) bool {
	type br struct {
		b int
		r float64
	}
	m := map[string]br{}
	for _, x := range a.Models {
		m[x.Name] = br{x.Batch, x.Rate}
	}
	for _, x := range b.Models {
		if m[x.Name] != (br{x.Batch, x.Rate}) {
			return false
		}
	}
	return true
}
