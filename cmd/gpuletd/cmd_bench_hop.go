package main

import (
	"fmt"
	"os"

	"github.com/gpulet/gpuletd/executor"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchHopCmd) }

func newBenchHopCmd(_ *globalFlags) *cobra.Command {
	var (
		o      executor.HopOptions
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "hop",
		Short: "Round trip of one request from the daemon's client to an executor process and back",
		Long: `Start an executor process on an emulated gpu-let with a model whose batch
takes 1 µs, and time requests of one 1x28x28 FP32 tensor sent one at a time
over its Unix socket: the cost of the daemon→executor hop itself.

With --gap the requests are that far apart, as at a moderate rate (400
requests/s is 2.5 ms apart): both processes then sleep between requests
and each request pays for waking them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "gpuletd-hop-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			o.Dir = dir
			res, err := executor.BenchHop(cmd.Context(), o)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "hop over %d requests: p50 %.1f µs, p90 %.1f µs, p99 %.1f µs (executor inside: %.1f µs)\n",
				res.Requests, res.P50US, res.P90US, res.P99US, res.ExecutorUS)
			return nil
		},
	}
	cmd.Flags().IntVar(&o.Requests, "requests", 20000, "timed requests")
	cmd.Flags().IntVar(&o.Warmup, "warmup", 1000, "untimed requests first")
	cmd.Flags().DurationVar(&o.Gap, "gap", 0, "idle time between requests (0: back to back)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
