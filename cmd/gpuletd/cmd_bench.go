package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"
)

// benchCommands build the `gpuletd bench` subcommands; each experiment adds
// itself from its own file's init.
var benchCommands []func(g *globalFlags) *cobra.Command

func newBenchCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run a benchmark or experiment and print its table",
		Long: `Run one of gpuletd's benchmarks or experiments. Each prints a table, or JSON
with --json. docs/BENCHMARKS.md records the results and the commands.`,
	}
	for _, mk := range benchCommands {
		cmd.AddCommand(mk(g))
	}
	return commandGroup(cmd)
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
