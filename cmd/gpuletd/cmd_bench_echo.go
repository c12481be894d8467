package main

import (
	"fmt"
	"net"

	"github.com/gpulet/gpuletd/sim/loadgen/httpbench"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchEchoServerCmd) }

// newBenchEchoServerCmd is the bare server of bench http and bench grpc,
// run by them as a process of its own; hidden, as nobody else starts it.
func newBenchEchoServerCmd(*globalFlags) *cobra.Command {
	var specPath string
	cmd := &cobra.Command{
		Use:    "echo-server",
		Short:  "The bare server bench http and bench grpc compare the daemon with",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := httpbench.ReadEchoSpec(specPath)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return fmt.Errorf("listen for the echo server: %w", err)
			}
			defer ln.Close()
			// The bench waits for this line before it sends anything.
			fmt.Fprintf(cmd.OutOrStdout(), "listening %s\n", ln.Addr())
			return httpbench.ServeEcho(cmd.Context(), spec, ln)
		},
	}
	cmd.Flags().StringVar(&specPath, "spec", "", "the answer to serve (JSON written by the bench)")
	_ = cmd.MarkFlagRequired("spec")
	return cmd
}
