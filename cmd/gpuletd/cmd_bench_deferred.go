package main

import (
	"github.com/gpulet/gpuletd/sim"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchDeferredCmd) }

func newBenchDeferredCmd(_ *globalFlags) *cobra.Command {
	var (
		pf   paperFlags
		data string
	)
	cmd := &cobra.Command{
		Use:   "deferred-vs-eager",
		Short: "Goodput of deferred over eager batching on Symphony's A100 zoo",
		Long: `Symphony §3.4.2 (Figure 7): strong-, weak- and mixed-batching subsets of the
symphony-a100 zoo, 8 equally popular models, each on 2 whole GPUs of its own;
Poisson, Gamma(0.5, 0.3, 0.1) and the Azure conversation trace; SLOs 1x, 1.5x
and 2x the table's; goodput (99% within SLO) of deferred and eager with jitter
and with exact batch times. The Azure trace is read from the shared data
folder (found from the working directory upwards, or --data).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := sharedData(data)
			if err != nil {
				return err
			}
			res, err := sim.RunDeferredVsEager(cmd.Context(), data, pf.seed, pf.seeds)
			if err != nil {
				return err
			}
			return pf.report(cmd.OutOrStdout(), res.Plot, res, res.WriteTable)
		},
	}
	pf.addSeeds(cmd)
	pf.add(cmd, "deferred-vs-eager")
	cmd.Flags().StringVar(&data, "data", "", "the shared data folder (default: found from the working directory)")
	return cmd
}
