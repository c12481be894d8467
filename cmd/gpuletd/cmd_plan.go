package main

import (
	"github.com/gpulet/gpuletd/sim/workload"
	"github.com/spf13/cobra"
)

func newPlanCmd(_ *globalFlags) *cobra.Command {
	var (
		file, algo string
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Plan gpu-lets for a workload file and print the plan",
		Long: `Plan the node a workload file describes (devices, models, rates) with one of
the planners (gpulet, gpulet-int, sbp, ideal; default the file's, else
gpulet-int) and print the plan as a table, or as JSON with --json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := workload.PlanFile(cmd.Context(), file, algo)
			if err != nil {
				return err
			}
			if asJSON {
				return p.WriteJSON(cmd.OutOrStdout())
			}
			return p.WriteTable(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&file, "workload", "", "workload file (YAML)")
	cmd.Flags().StringVar(&algo, "algo", "", "planner: gpulet, gpulet-int, sbp or ideal (default: the file's, else gpulet-int)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	_ = cmd.MarkFlagRequired("workload")
	return cmd
}
