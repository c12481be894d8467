package main

import "github.com/spf13/cobra"

func newStatusCmd(_ *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show a running daemon's devices, gpu-lets and models",
		RunE:  func(*cobra.Command, []string) error { return errNotAvailable("status") },
	}
}
