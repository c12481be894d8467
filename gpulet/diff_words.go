package gpulet

import (
	"fmt"
	"strings"
)

// Steps says what the change does for people, a line per step: what
// starts, resizes or stops, and what a kept gpu-let loads, retunes and
// unloads. A gpu-let of the new plan is named by its GPU and its index
// there (the GPU-LET of WriteTable); one that stops, by its size and
// models.
func (c Change) Steps() []string {
	switch c.Action {
	case ActionStart:
		return []string{fmt.Sprintf("start %s gpu-let %d (%s) for %s", c.GPU, c.NewIndex, c.New.sizeWords(), c.New.modelWords())}
	case ActionResize:
		return []string{fmt.Sprintf("resize %s gpu-let %d (%s, was %s) for %s", c.GPU, c.NewIndex, c.New.sizeWords(), c.Old.sizeWords(), c.New.modelWords())}
	case ActionStop:
		return []string{fmt.Sprintf("stop %s's %s gpu-let of %s", c.GPU, c.Old.sizeWords(), c.Old.modelWords())}
	}
	at := fmt.Sprintf("%s gpu-let %d (%s)", c.GPU, c.NewIndex, c.New.sizeWords())
	var out []string
	if len(c.Load) > 0 {
		out = append(out, fmt.Sprintf("load %s on %s", strings.Join(c.Load, ", "), at))
	}
	if c.Retune {
		out = append(out, "retune "+at+": other batches or rates")
	}
	if len(c.Unload) > 0 {
		out = append(out, fmt.Sprintf("unload %s from %s", strings.Join(c.Unload, ", "), at))
	}
	return out
}

// sizeWords is a gpu-let's size as WriteTable writes it: 50%, or
// 43% 3g.20gb for a MIG instance.
func (l *GPULet) sizeWords() string {
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
