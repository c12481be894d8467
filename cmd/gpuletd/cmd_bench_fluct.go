package main

import (
	"io"

	"github.com/gpulet/gpuletd/sim"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchFluctCmd) }

func newBenchFluctCmd(_ *globalFlags) *cobra.Command {
	var pf paperFlags
	cmd := &cobra.Command{
		Use:   "fluctuation",
		Short: "1,800 s of rising and falling rates, re-planned every 20 s",
		Long: `The gpu-let paper §6.2 (Figure 14): 4 iGniter V100s and their 4 models, each
model's rate rising and falling twice over 1,800 s (the second wave higher);
the node re-plans every 20 s from measured rates and new gpu-lets serve after
10 s. Goodput, the sum of the gpu-let sizes in use and the SLO violations per
20 s, with batches on shared gpu-lets capped at the plan's as the daemon sets
them (violation_fraction in the JSON) and, for comparison, uncapped.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := sim.RunFluctuation(cmd.Context(), pf.seed)
			if err != nil {
				return err
			}
			return pf.report(cmd.OutOrStdout(), func(f string) error { return sim.PlotFluct(f, rep.Settings) },
				rep, func(w io.Writer) error { return sim.WriteFluct(w, rep.Settings) })
		},
	}
	pf.add(cmd, "fluctuation")
	return cmd
}
