package main

import (
	"io"

	"github.com/gpulet/gpuletd/sim"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchTemporalCmd) }

func newBenchTemporalCmd(_ *globalFlags) *cobra.Command {
	var pf paperFlags
	var set string
	var noCap bool
	var mixes, systems []string
	cmd := &cobra.Command{
		Use:   "gpulet-vs-temporal",
		Short: "Max goodput of gpu-let partitioning against whole-GPU temporal sharing (SBP)",
		Long: `The gpu-let paper §6.2 (Figure 12): the paper's scenario shapes on 4 GPUs of a
reference set (iGniter's V100s under MPS, with measured co-location slowdowns,
by default). For each mix: the largest rate the gpulet-int, sbp and ideal
planners can plan, the shape of each plan there, and the largest rate up to
its planner's max that each system serves with fewer than 1% of the requests
late or lost (bisection, median and range over --seeds seeds): gpulet-int,
gpulet and sbp with deferred executors and sbp with eager ones (whole GPUs,
eager batching: what Triton gives), executors as the daemon starts them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := sim.RunGpuletVsTemporal(cmd.Context(), sim.TemporalOptions{Set: set, Seed: pf.seed, Seeds: pf.seeds, NoBatchCap: noCap, Mixes: mixes, Systems: systems})
			if err != nil {
				return err
			}
			return pf.report(cmd.OutOrStdout(), func(f string) error { return sim.PlotTemporal(f, res) },
				res, func(w io.Writer) error { return sim.WriteTemporal(w, res) })
		},
	}
	pf.addSeeds(cmd)
	pf.add(cmd, "gpulet-vs-temporal")
	cmd.Flags().StringVar(&set, "set", "igniter-v100", "reference set of the GPUs and models")
	cmd.Flags().BoolVar(&noCap, "no-batch-cap", false, "let models on shared gpu-lets batch beyond the plan's batch")
	cmd.Flags().StringSliceVar(&mixes, "mix", nil, "run only these mixes (default all)")
	cmd.Flags().StringSliceVar(&systems, "system", nil, "run only these systems: gpulet-int, gpulet, sbp, sbp-eager (default all)")
	return cmd
}
