package sim

import (
	"fmt"
	"io"
	"strings"

	"github.com/gpulet/gpuletd/gpulet"
)

// WriteTable writes the gpus-needed result: one row per scenario, then each
// scenario's plan layout.
func (r *GPUsResult) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "set %s, rule %s, planner %s, seeds %v\n\n", r.Set, r.Rule, r.Algo, r.Seeds)
	b.WriteString("| scenario | models | GPUs | ParvaGPU GPUs | violations (median, range) | plan ms |\n")
	b.WriteString("| ---      | ---    | ---  | ---           | ---                        | ---     |\n")
	total, parva := 0, 0
	for _, row := range r.Rows {
		models := 0
		if row.Plan != nil {
			models = len(row.Plan.Assigned())
		}
		gpus := fmt.Sprint(row.GPUs)
		if row.GPUs == 0 {
			gpus = fmt.Sprintf("> %d", MaxGPUsTried)
		}
		pv := "—"
		if row.ParvaGPU > 0 {
			pv = fmt.Sprint(row.ParvaGPU)
			parva += row.ParvaGPU
		}
		total += row.GPUs
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %.2f%% (%.2f–%.2f%%) | %.1f |\n", row.Index, models, gpus, pv,
			100*row.ViolationFraction, 100*row.Violations.Min, 100*row.Violations.Max, row.PlanMS)
	}
	fmt.Fprintf(&b, "| total | | %d | %d | | |\n", total, parva)
	for _, row := range r.Rows {
		if row.Plan == nil {
			continue
		}
		fmt.Fprintf(&b, "\nscenario %d:\n", row.Index)
		for _, g := range row.Plan.GPUs {
			if len(g.GPULets) == 0 {
				continue
			}
			var lets []string
			for _, l := range g.GPULets {
				lets = append(lets, letText(l))
			}
			fmt.Fprintf(&b, "  %s: %s\n", g.ID, strings.Join(lets, " | "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// letText is one gpu-let in a layout line: its MIG profile (or size) and
// its models with batch, processes and rate.
func letText(l gpulet.GPULet) string {
	name := l.MIGProfile
	if name == "" {
		name = fmt.Sprintf("%d%%", l.Size)
	}
	var ms []string
	for _, m := range l.Models {
		procs := ""
		if m.Procs > 1 {
			procs = fmt.Sprintf(" in %d procs", m.Procs)
		}
		ms = append(ms, fmt.Sprintf("%s b%d%s @%.0f/s", m.Name, m.Batch, procs, m.Rate))
	}
	return name + " " + strings.Join(ms, ", ")
}
