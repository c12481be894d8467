package main

import (
	"github.com/gpulet/gpuletd/sim"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchFlatTopCmd) }

func newBenchFlatTopCmd(_ *globalFlags) *cobra.Command {
	var pf paperFlags
	cmd := &cobra.Command{
		Use:   "flat-top",
		Short: "Goodput and GPU busy fraction from 0.2 to 2 times the capacity",
		Long: `Symphony §3.5 and §5.4 (Figure 2): 10 models with ResNet50's A100 profile and a
100 ms SLO on 8 whole A100s, planned at each offered rate; offered load from
0.2 to 2 times deferred's capacity; goodput, SLO attainment and the GPUs' busy
fraction of deferred, Symphony's published rule and eager.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := sim.RunFlatTop(cmd.Context(), pf.seed)
			if err != nil {
				return err
			}
			return pf.report(cmd.OutOrStdout(), res.Plot, res, res.WriteTable)
		},
	}
	pf.add(cmd, "flat-top")
	return cmd
}
