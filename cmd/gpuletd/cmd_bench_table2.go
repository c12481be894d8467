package main

import (
	"io"

	"github.com/gpulet/gpuletd/sim"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchTable2Cmd) }

func newBenchTable2Cmd(_ *globalFlags) *cobra.Command {
	var (
		pf    paperFlags
		exact bool
	)
	cmd := &cobra.Command{
		Use:   "symphony-table2",
		Short: "Symphony's Table 2: goodput of every policy on 8 GPUs against the staggered bound",
		Long: `ResNet50 (α 1.053 ms, β 5.072 ms, SLO 25 ms) and InceptionResNetV2 (α 5.090,
β 18.368, SLO 70) each alone on 8 whole GPUs, Poisson arrivals: the goodput
(largest offered rate with 99% of the requests within SLO) of the deferred,
eager, timeout (best k of 10–40% of the SLO) and flex policies, against
Symphony's analytic staggered bound and its measured goodput, medians over
--seeds seeds (the deferred column gives the range). The table has
both batch timings (the emulated engine's 2% jitter and exact); --json prints
{"<model>": {"bound", "deferred", "eager", "timeout", "flex"}} for the jitter
timing, or for exact timing with --exact.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			timings := sim.Timings
			want := sim.Timings[0].Name
			if exact {
				want = sim.Timings[1].Name
			}
			if pf.asJSON {
				for _, tm := range sim.Timings {
					if tm.Name == want {
						timings = []sim.Timing{tm}
					}
				}
			}
			var rows []sim.Table2Row
			for _, tm := range timings {
				r, err := sim.RunTable2(cmd.Context(), sim.SeedList(pf.seed, pf.seeds), tm)
				if err != nil {
					return err
				}
				rows = append(rows, r...)
			}
			return pf.report(cmd.OutOrStdout(), func(f string) error { return sim.PlotTable2(f, rows) },
				sim.Table2JSON(rows, want), func(w io.Writer) error { return sim.WriteTable2(w, rows) })
		},
	}
	pf.addSeeds(cmd)
	pf.add(cmd, "symphony-table2")
	cmd.Flags().BoolVar(&exact, "exact", false, "with --json: exact batch times instead of the default jitter")
	return cmd
}
