package main

import "github.com/spf13/cobra"

func newPlanCmd(_ *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "plan",
		Short: "Plan gpu-lets for a workload file and print the plan",
		RunE:  func(*cobra.Command, []string) error { return errNotAvailable("plan") },
	}
}
