package main

import "github.com/spf13/cobra"

func newProfileCmd(_ *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "profile MODEL",
		Short: "Measure a model's latency curves L(b,p) and store them",
		RunE:  func(*cobra.Command, []string) error { return errNotAvailable("profile") },
	}
}

func newPlanCmd(_ *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "plan",
		Short: "Plan gpu-lets for a workload file and print the plan",
		RunE:  func(*cobra.Command, []string) error { return errNotAvailable("plan") },
	}
}

func newSimulateCmd(_ *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "simulate",
		Short: "Simulate a node serving a workload file in virtual time",
		RunE:  func(*cobra.Command, []string) error { return errNotAvailable("simulate") },
	}
}

func newBenchCmd(_ *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "bench",
		Short: "Run a benchmark or experiment and print its table",
		RunE:  func(*cobra.Command, []string) error { return errNotAvailable("bench") },
	}
}

func newStatusCmd(_ *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show a running daemon's devices, gpu-lets and models",
		RunE:  func(*cobra.Command, []string) error { return errNotAvailable("status") },
	}
}
