package main

import (
	"github.com/gpulet/gpuletd/sim"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchLokiCmd) }

func newBenchLokiCmd(_ *globalFlags) *cobra.Command {
	var (
		pf      paperFlags
		data    string
		workers int
		minAcc  float64
	)
	cmd := &cobra.Command{
		Use:   "loki",
		Short: "Loki's Figure 5: the traffic pipeline served through the Azure trace with hardware and accuracy scaling",
		Long: `Loki's traffic-analysis pipeline (YOLOv5 n…x detector, an EfficientNet
b0…b6 classifier for every car it finds, SLO 250 ms) on --workers whole GTX
1080 Ti GPUs with Loki's batch times, in the simulator, its demand following
the Azure conversation trace scaled so that its busiest 30th runs at the
demand searched. Three systems: gpuletd (hardware, then accuracy scaling over
the pipeline, down to --min-accuracy of full), pipeline_unaware (each task
scaled on its own load) and hardware_only (full accuracy, the excess
dropped). A system's capacity is the largest peak demand with under 1% of the
requests violating the end-to-end SLO over the busy period and the whole
trace (median over --seeds); all three then run with the trace peaking at
2.5× hardware_only's capacity. --json prints {"capacity_ratio",
"accuracy_at_capacity", "violations": {"gpuletd", "pipeline_unaware",
"hardware_only"} (whole trace), "busy_violations", "worst_violations", …}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := sharedData(data)
			if err != nil {
				return err
			}
			floor := minAcc
			if floor == 0 {
				floor = -1 // none (LokiOptions takes 0 as the default)
			}
			res, err := sim.RunLoki(cmd.Context(), sim.LokiOptions{Data: data, Workers: workers, Seeds: sim.SeedList(pf.seed, pf.seeds), MinAccuracy: floor})
			if err != nil {
				return err
			}
			return pf.report(cmd.OutOrStdout(), res.Plot, res, res.WriteTable)
		},
	}
	pf.addSeeds(cmd)
	pf.add(cmd, "loki")
	cmd.Flags().StringVar(&data, "data", "", "the shared data folder (default: found from the working directory)")
	cmd.Flags().IntVar(&workers, "workers", sim.DefaultLokiWorkers, "whole GPUs in the node")
	cmd.Flags().Float64Var(&minAcc, "min-accuracy", sim.DefaultLokiMinAccuracy, "gpuletd's accuracy floor, a share of full accuracy (0: none)")
	return cmd
}
