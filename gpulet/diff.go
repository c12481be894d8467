package gpulet

import (
	"slices"
	"strings"
)

// Action is what the node does with one gpu-let when it moves from what runs
// to the next plan.
type Action string

// Actions of a PlanDiff.
const (
	// ActionStart: a gpu-let nothing running matches; start its executor
	// (load and warm up) before the router switches.
	ActionStart Action = "start"
	// ActionStop: a running gpu-let the new plan does not keep; drain and
	// stop it after the router switched.
	ActionStop Action = "stop"
	// ActionResize: the same models on the same GPU in another size (or
	// MIG instance): a new executor beside the old one, then drain the old.
	ActionResize Action = "resize"
	// ActionKeep: a running gpu-let of the same size (and MIG instance) on
	// the same GPU stays. Load lists the models it gains (loaded and warmed
	// up before the switch), Unload those it loses (unloaded once drained),
	// Retune whether the batches or rates of the models it keeps change.
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
	// Load and Unload are the models a kept gpu-let gains and loses.
	Load   []string `json:"load,omitempty"`
	Unload []string `json:"unload,omitempty"`
	// Retune is set on a kept gpu-let whose kept models' batches, rates or
	// interference factors change.
	Retune bool `json:"retune,omitempty"`
}

// PlanDiff lists the changes from one plan to the next, in the order the
// node applies them: start and resize first (new executors beside the
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
// does: every gpu-let kept with the same models, batches and rates.
func (d PlanDiff) Unchanged() bool { return len(d.Actions()) == 0 }

// Actions are the changes that do something: every start, resize and
// stop, and each kept gpu-let that loads, unloads or is retuned.
func (d PlanDiff) Actions() []Change {
	var out []Change
	for _, c := range d.Changes {
		if c.Action != ActionKeep || c.Retune || len(c.Load) > 0 || len(c.Unload) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// Diff compares two plans GPU by GPU (by id); the old plan is usually what
// runs now. On one GPU each new gpu-let, in order, keeps an old one of the
// same size and MIG instance: first one with the same models, else the one
// that has most of its models (so that the fewest models load and warm up;
// the kept executor loads what it gains and unloads what it loses). A new
// gpu-let no old one of its size is left for resizes an old one with the
// same models, else starts; every old gpu-let left over stops. A nil old
// plan starts everything; a nil new plan stops everything.
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
		// match gives each unmatched new gpu-let the unused old one that
		// same accepts with the highest score (the first on ties).
		match := func(same func(a, b GPULet) bool, score func(a, b GPULet) int) {
			for j := range n {
				if matched[j] >= 0 {
					continue
				}
				best := -1
				for i := range o {
					if !usedO[i] && same(o[i], n[j]) && (best < 0 || score(o[i], n[j]) > score(o[best], n[j])) {
						best = i
					}
				}
				if best >= 0 {
					usedO[best], matched[j] = true, best
				}
			}
		}
		none := func(a, b GPULet) int { return 0 }
		match(func(a, b GPULet) bool { return sameInstance(a, b) && sameModels(a, b) }, none)
		match(sameInstance, overlap)
		kept := slices.Clone(matched)
		match(sameModels, none)
		for j := range n {
			nl := n[j]
			switch i := matched[j]; {
			case i < 0:
				first = append(first, Change{Action: ActionStart, GPU: id, OldIndex: -1, NewIndex: j, New: &nl})
			case kept[j] >= 0:
				ol := o[i]
				c := Change{Action: ActionKeep, GPU: id, OldIndex: i, NewIndex: j, Old: &ol, New: &nl, Retune: !sameSchedule(ol, nl)}
				c.Load, c.Unload = missing(nl, ol), missing(ol, nl)
				keep = append(keep, c)
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

// overlap counts b's models that a has.
func overlap(a, b GPULet) int { return len(b.Models) - len(missing(b, a)) }

// missing lists a's models that b lacks, in a's order.
func missing(a, b GPULet) []string {
	var out []string
	for _, m := range a.Models {
		if !slices.ContainsFunc(b.Models, func(p Placement) bool { return p.Name == m.Name }) {
			out = append(out, m.Name)
		}
	}
	return out
}

// sameSchedule says whether the models both gpu-lets hold run the same
// batches at the same rates and interference factors.
func sameSchedule(a, b GPULet) bool {
	type sched struct {
		b    int
		r, f float64
	}
	m := map[string]sched{}
	for _, x := range a.Models {
		m[x.Name] = sched{x.Batch, x.Rate, x.Factor}
	}
	for _, x := range b.Models {
		if s, ok := m[x.Name]; ok && s != (sched{x.Batch, x.Rate, x.Factor}) {
			return false
		}
	}
	return true
}
