package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gpulet/gpuletd/pipeline"
	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchLokiPlanCmd) }

// lokiPlanFactors are the demands the loki-plan table shows, as multiples of
// what hardware scaling alone carries.
var lokiPlanFactors = []float64{0.1, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4, 6, 8}

func newBenchLokiPlanCmd(_ *globalFlags) *cobra.Command {
	var (
		workers int
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "loki-plan",
		Short: "Loki's traffic pipeline: the pipeline planner's choice at each demand (hardware, then accuracy scaling)",
		Long: `Plans Loki's traffic-analysis pipeline (YOLOv5 n/s/m/l/x detector, then an
EfficientNet B0-B6 classifier for every car found; SLO 250 ms) on --workers
whole GTX 1080 Ti GPUs of the loki-1080ti reference set, at demands from 0.1×
to 8× what hardware scaling alone carries: the scaling mode, workers used,
expected end-to-end accuracy (relative to full accuracy), each task's budget
and variant mix. This is the planner alone; nothing is served.
--json prints {"full_accuracy_max", "max_demand", "planned_capacity_ratio",
"points": [{"factor", "relative_accuracy", "plan": {…}}, …]}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set, err := refset.Load(refset.SetLoki1080Ti)
			if err != nil {
				return err
			}
			p, err := pipeline.TrafficAnalysis(pipeline.SetProfile(set, 100))
			if err != nil {
				return err
			}
			r, err := pipeline.Curve(p, workers, lokiPlanFactors)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), r)
			}
			return writeLokiPlan(cmd.OutOrStdout(), r)
		},
	}
	cmd.Flags().IntVar(&workers, "workers", 8, "whole GPUs in the node")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of the table")
	return cmd
}

// writeLokiPlan prints a curve as a table.
func writeLokiPlan(w io.Writer, r pipeline.CurveResult) error {
	fmt.Fprintf(w, "%s on %d workers: hardware scaling alone carries %.1f req/s, any variants %.1f (%.2f×); full accuracy %.4f\n",
		r.Pipeline, r.Workers, r.FullAccuracyMax, r.MaxDemand, r.PlannedCapacityRatio, r.FullAccuracy)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEMAND\t×\tSCALING\tWORKERS\tACCURACY\tBUDGETS ms\tVARIANTS (workers × batch, share)\tPLAN ms")
	for _, pt := range r.Points {
		mode := pt.Plan.Scaling
		if pt.Overloaded {
			mode = fmt.Sprintf("overloaded (plan for %.1f)", pt.Plan.Demand)
		}
		var budgets, mix []string
		for _, tp := range pt.Plan.Tasks {
			budgets = append(budgets, fmt.Sprintf("%.1f", tp.BudgetMS))
			var vs []string
			for _, v := range tp.Variants {
				vs = append(vs, fmt.Sprintf("%s %d×%d %.0f%%", v.Variant, v.Workers, v.Batch, 100*v.Share))
			}
			mix = append(mix, strings.Join(vs, " + "))
		}
		fmt.Fprintf(tw, "%.1f\t%.2f\t%s\t%d\t%.3f\t%s\t%s\t%.1f\n", pt.Factor*r.FullAccuracyMax, pt.Factor, mode, pt.Plan.Workers,
			pt.RelativeAccuracy, strings.Join(budgets, " + "), strings.Join(mix, " → "), pt.PlanMS)
	}
	return tw.Flush()
}
