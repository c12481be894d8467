package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/sim/loadgen/httpbench"
	"github.com/spf13/cobra"
)

func init() { benchCommands = append(benchCommands, newBenchHTTPCmd) }

// httpBenchModel is the model the HTTP bench serves.
const httpBenchModel = "lenet5"

func newBenchHTTPCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	o := httpbench.Options{Model: httpBenchModel}
	cmd := &cobra.Command{
		Use:   "http",
		Short: "The daemon's HTTP path against a bare net/http echo of the same payload",
		Long: `Start gpuletd serve as a child (temporary state, a repository holding the
modelzoo's lenet5, a free port on loopback) and, in this process, a bare
net/http server that reads the same request body and answers the daemon's
answer's bytes. Drive both with the same open-loop generator at the same rate,
one after the other, and compare latency.

The rate is found first (unless --rate is given): from 200 requests/s, doubled
while the daemon's p99 stays under the model's SLO with no failures, up to
--max-rate. overhead_p50_us is the daemon's p50 minus the echo's p50 minus the
mean time a request spent in the executor (queue and compute, from the
statistics extension): what the HTTP decode, routing, the hop to the executor
and the encoding add. A last run sends inputs the model does not know, which
the daemon decodes whole and refuses with 400, to split that overhead.

Device: cpu runs "gpuletd profile lenet5 --device cpu" first (the daemon places
models on the CPU once they have a profile); emulated uses an emulated V100
(igniter-v100) on which lenet5 takes the alexnet curve; auto tries cpu and
falls back to emulated, saying why.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := g.loadConfig()
			if err != nil {
				return err
			}
			if o.Exe, err = os.Executable(); err != nil {
				return fmt.Errorf("find this executable: %w", err)
			}
			if o.ONNXRuntimeLibrary, err = onnxrt.FindLibrary(l.Config.ONNXRuntime.Library); err != nil {
				return err
			}
			o.Environ, o.Progress = os.Environ(), cmd.ErrOrStderr()
			o.Repository = func(dir string) error { return modelzoo.WriteRepository(dir, []string{httpBenchModel}, o.Seed) }
			res, err := httpbench.Run(cmd.Context(), o)
			if err != nil {
				return daemonError("the bench's daemon", err)
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), res)
			}
			return writeHTTPBench(cmd.OutOrStdout(), res)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Device, "device", httpbench.DeviceAuto, "device of the daemon: auto, cpu or emulated")
	f.StringVar(&o.Policy, "policy", "eager", "the daemon's batch scheduling policy (eager does not hold requests back)")
	f.Float64Var(&o.Rate, "rate", 0, "request rate; 0 finds a sustainable one")
	f.Float64Var(&o.MaxRate, "max-rate", 3200, "highest rate the search tries")
	f.DurationVar(&o.Duration, "duration", 10*time.Second, "measured time of each server")
	f.DurationVar(&o.Probe, "probe", 2*time.Second, "measured time of each step of the rate search and of the refusal run")
	f.DurationVar(&o.Warmup, "warmup", 3*time.Second, "unrecorded time before each measurement (connections, re-planning)")
	f.BoolVar(&o.Binary, "binary", false, "binary tensors instead of JSON")
	f.IntVar(&o.Concurrency, "concurrency", 64, "most requests in flight")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the model's weights, the arrivals and the inputs")
	f.DurationVar(&o.ProfileTimeout, "profile-timeout", 10*time.Minute, "longest wait for the CPU profile")
	f.DurationVar(&o.ReadyTimeout, "ready-timeout", 2*time.Minute, "longest wait for the daemon to serve the model")
	f.DurationVar(&o.SLO, "slo", 0, "SLO of lenet5 in the temporary repository (default: the modelzoo's)")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// writeHTTPBench prints the comparison.
func writeHTTPBench(w io.Writer, r *httpbench.Result) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "HTTP path: gpuletd serve (device %s, policy %s) against a net/http echo\n", r.Device, r.Policy)
	if r.DeviceNote != "" {
		fmt.Fprintf(bw, "(not on the CPU: %s)\n", clip(r.DeviceNote, 160))
	}
	fmt.Fprintf(bw, "%s, %s tensors: %d-byte requests, %.0f-byte answers; Poisson %.0f requests/s, %gs each\n\n",
		r.Model, r.Tensors, r.RequestBytes, r.ResponseBytes, r.Rate, r.DurationS)
	tw := newTable(bw)
	fmt.Fprintln(tw, "\tP50\tP90\tP99\tMAX\tOK")
	fmt.Fprintf(tw, "daemon\t%s\t%s\t%s\t%s\t%d of %d\n", usStr(r.DaemonP50US), usStr(r.DaemonP90US), usStr(r.DaemonP99US), usStr(r.DaemonMaxUS), r.DaemonOK, r.DaemonSent)
	fmt.Fprintf(tw, "echo\t%s\t%s\t%s\t%s\t%d\n", usStr(r.EchoP50US), usStr(r.EchoP90US), usStr(r.EchoP99US), usStr(r.EchoMaxUS), r.EchoOK)
	if err := tw.Flush(); err != nil {
		return err
	}
	met := "met"
	if !r.FloorMet {
		met = "MISSED"
	}
	fmt.Fprintf(bw, "\nexecutor (queue + compute, mean)  %s\n", usStr(r.ExecutorMeanUS))
	fmt.Fprintf(bw, "overhead p50                      %s  (daemon p50 − echo p50 − executor; floor %s: %s)\n", usStr(r.OverheadP50US), usStr(r.FloorUS), met)
	if r.RefuseP50US > 0 {
		fmt.Fprintf(bw, "  read + decode + refuse          %s  (p50 of a decoded request refused with 400 − echo p50)\n", usStr(r.DecodeP50US))
		fmt.Fprintf(bw, "  route + executor hop + encode   %s  (the rest)\n", usStr(r.HopP50US))
	}
	fmt.Fprintf(bw, "requests/s answered               %.0f (SLO %gms, attainment %.1f%%)\n", r.RequestsPerSecond, r.SLOMS, 100*r.DaemonAttainment)
	fmt.Fprintf(bw, "CPU per request                   daemon %s, executor %s (%s and %s net of idle)\n", cpuStr(r.DaemonCPUUS), cpuStr(r.ExecutorCPUUS), cpuStr(r.DaemonNetCPUUS), cpuStr(r.ExecutorNetCPUUS))
	fmt.Fprintf(bw, "CPU when idle                     daemon %s, executor %s of a core\n", coreStr(r.DaemonIdleCPU), coreStr(r.ExecutorIdleCPU))
	return bw.Flush()
}

func usStr(v float64) string { return millis(v / 1000) }

func coreStr(v float64) string {
	if v < 0 {
		return "unknown"
	}
	return percent(v)
}

func cpuStr(v float64) string {
	if v < 0 {
		return "unknown"
	}
	return usStr(v)
}
