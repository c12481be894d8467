package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/planbench"
	"github.com/spf13/cobra"
)

func init() {
	benchCommands = append(benchCommands, newBenchSchedulabilityCmd, newBenchMaxRateCmd, newBenchPlannerCmd)
}

// nodeFlags pick the reference set and GPU count the planner benchmarks
// plan for.
type nodeFlags struct {
	set    string
	gpus   int
	asJSON bool
}

func (f *nodeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.set, "set", "igniter-v100", "reference profile set")
	cmd.Flags().IntVar(&f.gpus, "gpus", 4, "GPUs in the node")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON instead of the table")
}

// planAlgos is the order planners are printed in.
var planAlgos = []gpulet.Algo{gpulet.AlgoGpuletInt, gpulet.AlgoGpulet, gpulet.AlgoIdeal, gpulet.AlgoSBP}

func newBenchSchedulabilityCmd(_ *globalFlags) *cobra.Command {
	var (
		nf   nodeFlags
		step float64
	)
	cmd := &cobra.Command{
		Use:   "schedulability",
		Short: "How many rate scenarios (every model at 0, r, 2r or 3r req/s) each planner schedules",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := planbench.LoadNode(nf.set, nf.gpus)
			if err != nil {
				return err
			}
			r, err := planbench.RunSchedulability(cmd.Context(), n, step)
			if err != nil {
				return err
			}
			if nf.asJSON {
				return printJSON(cmd.OutOrStdout(), r)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "%s, %d GPUs, rate step %g req/s: %d scenarios of %s\n", r.Set, r.GPUs, r.RateStep, r.Scenarios, strings.Join(r.Models, ", "))
			fmt.Fprintln(tw, "PLANNER\tSCHEDULABLE\tSHARE\tPAST THE PLAN LIMIT")
			for _, a := range planAlgos {
				fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%d\n", a, r.Schedulable[a], 100*float64(r.Schedulable[a])/float64(r.Scenarios), r.TimedOut[a])
			}
			fmt.Fprintf(tw, "ideal only %d, gpulet-int only %d; a plan past %s counts as not schedulable\n", r.IdealOnly, r.HeuristicOnly, planbench.DefaultPlanLimit)
			return tw.Flush()
		},
	}
	nf.add(cmd)
	cmd.Flags().Float64Var(&step, "step", planbench.PaperRateStep, "rate step r, req/s")
	return cmd
}

func newBenchMaxRateCmd(_ *globalFlags) *cobra.Command {
	var nf nodeFlags
	cmd := &cobra.Command{
		Use:   "maxrate",
		Short: "Largest schedulable scale of each rate mix, per planner",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := planbench.LoadNode(nf.set, nf.gpus)
			if err != nil {
				return err
			}
			r, err := planbench.RunMaxRate(cmd.Context(), n)
			if err != nil {
				return err
			}
			if nf.asJSON {
				return printJSON(cmd.OutOrStdout(), r)
			}
			return writeMaxRate(cmd.OutOrStdout(), r)
		},
	}
	nf.add(cmd)
	return cmd
}

// writeMaxRate prints the total schedulable req/s per mix and planner, and
// gpulet-int's ratio to ideal and SBP.
func writeMaxRate(w io.Writer, r *planbench.MaxRate) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s, %d GPUs: largest schedulable total rate, req/s\n", r.Set, r.GPUs)
	fmt.Fprint(tw, "MIX")
	for _, a := range planAlgos {
		fmt.Fprintf(tw, "\t%s", a)
	}
	fmt.Fprintln(tw, "\tINT/IDEAL\tINT/SBP")
	mixes := make([]string, 0, len(r.Rates))
	for m := range r.Rates {
		mixes = append(mixes, m)
	}
	slices.Sort(mixes)
	for _, m := range mixes {
		x := r.Rates[m]
		fmt.Fprint(tw, m)
		for _, a := range planAlgos {
			mark := ""
			if slices.Contains(r.LowerBounds[m], a) {
				mark = "≥"
			}
			fmt.Fprintf(tw, "\t%s%.0f", mark, x[a])
		}
		fmt.Fprintf(tw, "\t%.3f\t%.3f\n", ratio(x[gpulet.AlgoGpuletInt], x[gpulet.AlgoIdeal]), ratio(x[gpulet.AlgoGpuletInt], x[gpulet.AlgoSBP]))
	}
	if len(r.LowerBounds) > 0 {
		fmt.Fprintf(tw, "≥: some plan of the search ran past %s and counted as not schedulable; a lower bound\n", planbench.DefaultPlanLimit)
	}
	return tw.Flush()
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func newBenchPlannerCmd(_ *globalFlags) *cobra.Command {
	var nf nodeFlags
	cmd := &cobra.Command{
		Use:   "planner",
		Short: "Median wall time of one gpulet-int plan (5 models × 4 GPUs, 64 models × 8 GPUs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := planbench.LoadNode(nf.set, nf.gpus)
			if err != nil {
				return err
			}
			r, err := planbench.RunPlannerTime(cmd.Context(), n)
			if err != nil {
				return err
			}
			if nf.asJSON {
				return printJSON(cmd.OutOrStdout(), r)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: gpulet-int plan, median of %d: %.2f ms (5 models × 4 GPUs), %.2f ms (64 models × 8 GPUs)\n",
				r.Set, r.Runs, r.MS5x4, r.MS64x8)
			return err
		},
	}
	nf.add(cmd)
	return cmd
}
