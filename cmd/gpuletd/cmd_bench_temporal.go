package main

import (
	"github.com/gpulet/gpuletd/sim"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchTemporalCmd) }

func newBenchTemporalCmd(_ *globalFlags) *cobra.Command {
	var pf paperFlags
	cmd := &cobra.Command{
		Use:   "gpulet-vs-temporal",
		Short: "Max goodput of gpu-let partitioning against whole-GPU temporal sharing (SBP)",
		Long: `The gpu-let paper §6.2 (Figure 12): the paper's scenario shapes on 4 iGniter
V100s under MPS with measured co-location slowdowns; the largest rate each of
gpulet-int, gpulet and sbp (deferred executors) and sbp with eager executors
serves with fewer than 1% SLO violations, with batches on shared gpu-lets as
the daemon sets them and capped at the plan's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows, err := sim.RunGpuletVsTemporal(cmd.Context(), pf.seed)
			if err != nil {
				return err
			}
			if err := pf.finish(cmd.OutOrStdout(), func(f string) error { return sim.PlotTemporal(f, rows) }); err != nil {
				return err
			}
			if pf.asJSON {
				return printJSON(cmd.OutOrStdout(), rows)
			}
			return sim.WriteTemporal(cmd.OutOrStdout(), rows)
		},
	}
	pf.add(cmd, "gpulet-vs-temporal")
	return cmd
}
