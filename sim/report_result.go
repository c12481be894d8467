package sim

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
)

// WriteSummary writes the result for people: totals, the plans applied and
// one row per model.
func (r *Result) WriteSummary(w io.Writer) error {
	fmt.Fprintf(w, "policy %s, planner %s, seed %d: %.0f s offered, %d requests (%.0f req/s)\n",
		r.Policy, r.Algo, r.Seed, r.DurationS, r.Requests, r.OfferedRate)
	fmt.Fprintf(w, "goodput %.1f req/s, %.3f%% within SLO, %d late, %d rejected", r.Goodput, 100*r.SLOAttainment, r.Late, r.Rejections())
	for _, k := range slices.Sorted(maps.Keys(r.Rejected)) {
		fmt.Fprintf(w, " (%s %d)", k, r.Rejected[k])
	}
	fmt.Fprintf(w, "\nGPUs busy %.1f%% on average, gpu-let sizes in use %.0f%% on average, mean batch %.2f, %d reorganizations\n",
		100*r.MeanBusy, r.MeanSizeSum, r.MeanBatch, r.Reorganizations)
	for _, p := range r.Pipelines {
		fmt.Fprintf(w, "pipeline %s (%s scaling): %d requests, %.3f%% within SLO end to end, %d late, %d dropped early; accuracy served %.4f (%.3f of full); %.2f GPUs needed on average\n",
			p.Name, p.Scaling, p.Requests, 100*p.SLOAttainment, p.Late, p.Dropped, p.Accuracy, p.Accuracy/max(p.FullAccuracy, 1e-9), p.MeanWorkers)
	}
	for _, p := range r.Plans {
		fmt.Fprintf(w, "plan at %.1f s (%s), serving from %.1f s: %s", p.AtS, p.Reason, p.ServingS, p.Layout)
		if p.Unscheduled > 0 {
			fmt.Fprintf(w, "; %.1f req/s unscheduled", p.Unscheduled)
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tSLO MS\tREQUESTS\tWITHIN SLO\tLATE\tREJECTED\tP50 MS\tP99 MS\tMEAN BATCH")
	for _, m := range r.Models {
		var rej uint64
		for _, v := range m.Rejected {
			rej += v
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%d\t%.3f%%\t%d\t%d\t%.2f\t%.2f\t%.2f\n", m.Name, m.SLOMS, m.Requests, 100*m.SLOAttainment, m.Late, rej, m.P50MS, m.P99MS, m.MeanBatch)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}
