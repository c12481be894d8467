package main

import (
	"fmt"

	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchSchedulerCmd) }

func newBenchSchedulerCmd(_ *globalFlags) *cobra.Command {
	var (
		models, requests int
		seed             uint64
		asJSON           bool
	)
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Requests per second per core of the scheduling core, in virtual time",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := sched.BenchCore(models, requests, seed)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{
					"models": res.Models, "requests": res.Requests, "policy": res.Policy,
					"offered_rate": res.OfferedRate, "elapsed_s": res.Elapsed.Seconds(),
					"requests_per_second_per_core": res.RequestsPerSecondPerCore,
					"mean_batch":                   res.MeanBatch, "completed": res.Completed, "rejected": res.Rejected,
				})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "models %d, requests %d: %.2f M requests/s per core\n", models, requests, res.RequestsPerSecondPerCore/1e6)
			return nil
		},
	}
	cmd.Flags().IntVar(&models, "models", 10, "models on the gpu-let")
	cmd.Flags().IntVar(&requests, "requests", 2_000_000, "requests to schedule")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the arrivals")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
