package main

import (
	"errors"
	"path/filepath"

	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/sim"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchGPUsCmd) }

func newBenchGPUsCmd(_ *globalFlags) *cobra.Command {
	var (
		pf        paperFlags
		set       string
		scenarios string
		rule      string
		algo      string
	)
	cmd := &cobra.Command{
		Use:   "gpus-needed",
		Short: "Fewest A100s per ParvaGPU SLO scenario, planned on measured MIG × MPS profiles",
		Long: `For each of ParvaGPU's six SLO scenarios (rates and latency SLOs of up to 11
models), the fewest GPUs of the reference set on which the planner places the
whole demand, with MIG instances (up to 7 per GPU) and MPS processes inside
them as the set measured; the plan; and a check of that plan in simulation at
the scenario's rates (Poisson arrivals, the plan run as is) with the share of
requests late or lost, median over the seeds. ParvaGPU's own GPU counts on the
same data and rule are printed beside. --rule parvagpu holds every batch below
0.9 × SLO / 2 as ParvaGPU does; --rule serving is gpuletd's duty-cycle check.
The scenarios are read from --scenarios (default: parvagpu/SLO in the shared
data folder, found from the working directory upwards).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if pf.plot != "" {
				return errors.New("bench gpus-needed: draws no plot; the table and --json hold the result")
			}
			if scenarios == "" {
				d, err := sharedData("")
				if err != nil {
					return err
				}
				scenarios = filepath.Join(d, sim.ParvaSLODir)
			}
			s, err := refset.Load(set)
			if err != nil {
				return err
			}
			scs, err := sim.LoadParvaScenarios(scenarios, s.ModelNames())
			if err != nil {
				return err
			}
			res, err := sim.RunGPUsNeeded(cmd.Context(), set, scs, rule, algo, pf.seed, pf.seeds)
			if err != nil {
				return err
			}
			if pf.asJSON {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return res.WriteTable(cmd.OutOrStdout())
		},
	}
	pf.addSeeds(cmd)
	pf.add(cmd, "gpus-needed")
	cmd.Flags().StringVar(&set, "set", refset.SetParvaGPUA100, "the reference profile set")
	cmd.Flags().StringVar(&scenarios, "scenarios", "", "folder with SLO_latency.csv and SLO_req_rate.csv (default: the shared data's parvagpu/SLO)")
	cmd.Flags().StringVar(&rule, "rule", "parvagpu", "latency check: parvagpu (batch < 0.9 × SLO / 2) or serving (gpuletd's duty cycle)")
	cmd.Flags().StringVar(&algo, "algo", "gpulet", "planner: gpulet, gpulet-int, sbp or ideal")
	return cmd
}
