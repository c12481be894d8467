package main

import "github.com/spf13/cobra"

func newProfileCmd(_ *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "profile MODEL",
		Short: "Measure a model's latency curves L(b,p) and store them",
		RunE:  func(*cobra.Command, []string) error { return errNotAvailable("profile") },
	}
}
