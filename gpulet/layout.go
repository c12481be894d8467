package gpulet

import (
	"fmt"
	"sort"
	"strings"
)

// Layout describes a plan in one line: per used GPU its gpu-lets' sizes and
// the models on each with their batch and rate, "gpu0: 40%[a×8@120/s]
// 60%[b×2@40/s c×4@10/s]; gpu1: …", or "nothing placed".
func (p *Plan) Layout() string {
	return p.describe(func(m Placement) string { return fmt.Sprintf("%s×%d@%.0f/s", m.Name, m.Batch, m.Rate) })
}

// Shape is Layout without batches and rates: which models share which
// gpu-let sizes, "gpu0: 40%[a] 60%[b c]; …", so that a reader sees whether
// anything was partitioned.
func (p *Plan) Shape() string {
	return p.describe(func(m Placement) string { return m.Name })
}

// Arrangement is Layout without rates: which models share which gpu-let
// sizes and the batch each is planned for, "gpu0: 40%[a×8] 60%[b×2 c×4]; …".
// Two plans that differ only in the rates they were made for have the same
// arrangement.
func (p *Plan) Arrangement() string {
	return p.describe(func(m Placement) string { return fmt.Sprintf("%s×%d", m.Name, m.Batch) })
}

func (p *Plan) describe(model func(Placement) string) string {
	var parts []string
	for _, g := range p.GPUs {
		var lets []string
		for _, l := range g.GPULets {
			ms := make([]string, 0, len(l.Models))
			for _, m := range l.Models {
				ms = append(ms, model(m))
			}
			sort.Strings(ms)
			lets = append(lets, fmt.Sprintf("%d%%[%s]", l.Size, strings.Join(ms, " ")))
		}
		if len(lets) > 0 {
			parts = append(parts, g.ID+": "+strings.Join(lets, " "))
		}
	}
	if len(parts) == 0 {
		return "nothing placed"
	}
	return strings.Join(parts, "; ")
}
