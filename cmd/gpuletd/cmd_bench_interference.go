package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/gpulet/gpuletd/interference"
	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchInterferenceCmd) }

func newBenchInterferenceCmd(_ *globalFlags) *cobra.Command {
	var (
		data   string
		set    string
		seed   uint64
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "interference",
		Short: "Held-out error of the interference model on iGniter's measured co-locations",
		Long: `Fit the gpu-let paper's interference model (L2 and DRAM utilisation of both
models) and the best of gpuletd's candidates on iGniter's V100 co-locations,
and print their held-out relative latency errors (p50, p90, p95) under two
splits: leave one model out (lomo) and a random 70/30 split of the pairs.
--data reads an iGniter profile (v100-mps-profile.jsonl); without it the
embedded set --set is used (igniter-v100; h100-measured holds self
co-locations measured on an H100). --json prints errors as fractions.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var rep interference.BenchReport
			var err error
			if data != "" && cmd.Flags().Changed("set") {
				return fmt.Errorf("bench interference: --data and --set exclude each other")
			}
			if data == "" {
				s, lerr := refset.Load(set)
				if lerr != nil {
					return lerr
				}
				rep, err = refset.BenchInterferenceSet(s, seed)
			} else {
				f, oerr := os.Open(data)
				if oerr != nil {
					return fmt.Errorf("bench interference: %w", oerr)
				}
				defer f.Close()
				rep, err = refset.BenchInterference(f, seed)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			return writeInterferenceTable(cmd.OutOrStdout(), rep)
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "iGniter profile file (default: the embedded set --set)")
	cmd.Flags().StringVar(&set, "set", refset.SetIgniterV100, "reference set whose co-locations are fitted")
	cmd.Flags().Uint64Var(&seed, "seed", interference.DefaultSeed, "seed of the random split")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (errors as fractions)")
	return cmd
}

// writeInterferenceTable prints the report's errors in percent.
func writeInterferenceTable(w io.Writer, rep interference.BenchReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\tlomo p50\tlomo p90\tlomo p95\trandom p50\trandom p90\trandom p95\t")
	row := func(name string, q interference.SplitQuantiles) {
		fmt.Fprintf(tw, "%s\t%.2f%%\t%.2f%%\t%.2f%%\t%.2f%%\t%.2f%%\t%.2f%%\t\n", name,
			100*q.LOMO.P50, 100*q.LOMO.P90, 100*q.LOMO.P95, 100*q.Random.P50, 100*q.Random.P90, 100*q.Random.P95)
	}
	if rep.PaperSkipped != "" {
		fmt.Fprintln(tw, "paper\t-\t-\t-\t-\t-\t-\t")
	} else {
		row("paper", rep.Paper)
	}
	row("best: "+rep.Best.Name, rep.Best.SplitQuantiles)
	if err := tw.Flush(); err != nil {
		return err
	}
	if rep.PaperSkipped != "" {
		_, err := fmt.Fprintf(w, "the paper's model was not fitted: %s\n", rep.PaperSkipped)
		return err
	}
	return nil
}
