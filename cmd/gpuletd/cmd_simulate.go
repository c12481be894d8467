package main

import "github.com/spf13/cobra"

func newSimulateCmd(_ *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "simulate",
		Short: "Simulate a node serving a workload file in virtual time",
		RunE:  func(*cobra.Command, []string) error { return errNotAvailable("simulate") },
	}
}
