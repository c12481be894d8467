package gpulet

import (
	"fmt"
	"strings"
)

// Steps says what moving to the new plan does, for people, a line per
// step in the order a node takes them: the gpu-lets that start or resize,
// the models kept gpu-lets load and the ones retuned, then (once the routes
// have switched) the gpu-lets that stop, and last the models kept gpu-lets
// unload once drained. A gpu-let of the new plan is named by its GPU and
// its index there (the GPU-LET of WriteTable); one that stops, by its size
// and models.
func (d PlanDiff) Steps() []string {
	var starts, loads, stops, unloads []string
	for _, c := range d.Changes {
		switch c.Action {
		case ActionStart:
			starts = append(starts, fmt.Sprintf("start %s gpu-let %d (%s) for %s", c.GPU, c.NewIndex, c.New.SizeWords(), c.New.modelWords()))
		case ActionResize:
			starts = append(starts, fmt.Sprintf("resize %s gpu-let %d (%s, was %s) for %s", c.GPU, c.NewIndex, c.New.SizeWords(), c.Old.SizeWords(), c.New.modelWords()))
		case ActionStop:
			stops = append(stops, fmt.Sprintf("stop %s's %s gpu-let of %s", c.GPU, c.Old.SizeWords(), c.Old.modelWords()))
		case ActionKeep:
			at := fmt.Sprintf("%s gpu-let %d (%s)", c.GPU, c.NewIndex, c.New.SizeWords())
			if len(c.Load) > 0 {
				loads = append(loads, fmt.Sprintf("load %s on %s", strings.Join(c.Load, ", "), at))
			}
			if c.Retune {
				loads = append(loads, "retune "+at+": other batches or rates")
			}
			if len(c.Unload) > 0 {
				unloads = append(unloads, fmt.Sprintf("unload %s from %s", strings.Join(c.Unload, ", "), at))
			}
		}
	}
	return append(append(append(starts, loads...), stops...), unloads...)
}

// SizeWords is a gpu-let's size as WriteTable writes it: 50%, or
// 43% 3g.20gb for a MIG instance.
func (l *GPULet) SizeWords() string {
	if l == nil {
		return "?"
	}
	s := fmt.Sprintf("%d%%", l.Size)
	if l.MIGProfile != "" {
		s += " " + l.MIGProfile
	}
	return s
}

// modelWords lists a gpu-let's models.
func (l *GPULet) modelWords() string {
	if l == nil || len(l.Models) == 0 {
		return "no model"
	}
	names := make([]string, len(l.Models))
	for i, m := range l.Models {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}
