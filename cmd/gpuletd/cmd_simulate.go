package main

import (
	"time"

	"github.com/gpulet/gpuletd/sim"
	"github.com/gpulet/gpuletd/sim/workload"
	"github.com/spf13/cobra"
)

func newSimulateCmd(_ *globalFlags) *cobra.Command {
	var (
		file   string
		o      sim.Options
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "simulate [--workload] FILE",
		Short: "Simulate a node serving a workload file in virtual time",
		Long: `Simulate the node a workload file describes serving its demand, in virtual
time: the real planner, router and scheduling core, with batch times from the
reference sets' emulated physics (seeded jitter, co-location slowdowns). Prints
goodput, SLO attainment, the plans applied and per-model latency and batch
sizes, or the whole result (time series included) as JSON with --json.`,
		Args: argsForFlag("workload", 1),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageErrorf("simulate needs a workload file: gpuletd simulate FILE")
			}
			w, err := workload.Load(file)
			if err != nil {
				return err
			}
			res, err := sim.Run(cmd.Context(), w, o)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return res.WriteSummary(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&file, "workload", "", "workload file (YAML)")
	f.StringVar(&o.Policy, "policy", "", "scheduling policy: deferred, eager, timeout:<duration>, flex (default: the file's, else deferred)")
	f.StringVar(&o.Algo, "algo", "", "planner: gpulet, gpulet-int, sbp or ideal (default: the file's, else gpulet-int)")
	f.Uint64Var(&o.Seed, "seed", 0, "seed (default: the file's)")
	f.DurationVar(&o.Duration, "duration", 0, "offered time (default: the file's, else 60s)")
	f.Float64Var(&o.JitterCV, "jitter", 0, "coefficient of variation of batch times (default 0.02; negative: none)")
	f.DurationVar(&o.Interval, "interval", time.Second, "width of the time series' buckets")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
