package gpulet

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
)

// WriteTable writes the plan for people: one row per model per gpu-let,
// GPU by GPU, then the unscheduled rate with its reasons.
func (p *Plan) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	verdict := "schedulable"
	if !p.Schedulable {
		verdict = "NOT schedulable"
	}
	fmt.Fprintf(tw, "plan (%s): %s, %d of %d GPUs used\n", p.Algo, verdict, p.UsedGPUs(), len(p.GPUs))
	fmt.Fprintln(tw, "GPU\tGPU-LET\tSIZE\tDUTY MS\tBUSY\tMODEL\tBATCH\tRATE/S\tLAT MS\tFACTOR\tWORST MS\tSLO MS")
	for _, g := range p.GPUs {
		if len(g.GPULets) == 0 {
			fmt.Fprintf(tw, "%s\t-\t-\t\t\t(idle)\n", g.ID)
			continue
		}
		for li, l := range g.GPULets {
			size := l.SizeWords()
			for mi, m := range l.Models {
				gid, lid, sz, duty, busy := "", "", "", "", ""
				if mi == 0 {
					lid, sz = fmt.Sprint(li), size
					duty, busy = fmt.Sprintf("%.2f", l.DutyMS), fmt.Sprintf("%.0f%%", 100*l.Occupancy)
					if li == 0 {
						gid = g.ID
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f\t%.2f\t%.3f\t%.2f\t%.2f\n",
					gid, lid, sz, duty, busy, m.Name, m.Batch, m.Rate, m.LatencyMS, m.Factor, m.WorstMS, m.SLOMS)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write plan table: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Unscheduled)) {
		if _, err := fmt.Fprintf(w, "unscheduled %s: %.4g req/s: %s\n", name, p.Unscheduled[name], p.Reasons[name]); err != nil {
			return fmt.Errorf("write plan table: %w", err)
		}
	}
	return nil
}
