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

func init() { benchCommands = append(benchCommands, newBenchHTTPCmd, newBenchGRPCCmd) }

// httpBenchModel is the model the HTTP bench serves.
const httpBenchModel = "lenet5"

func newBenchHTTPCmd(g *globalFlags) *cobra.Command { return newPathBenchCmd(g, false) }

func newBenchGRPCCmd(g *globalFlags) *cobra.Command { return newPathBenchCmd(g, true) }

// newPathBenchCmd is bench http, or with grpc bench grpc: the same
// measurement of the gRPC path against a bare gRPC server.
func newPathBenchCmd(g *globalFlags, grpc bool) *cobra.Command {
	var asJSON bool
	o := httpbench.Options{Model: httpBenchModel, GRPC: grpc}
	cmd := &cobra.Command{
		Use:   "http",
		Short: "The daemon's HTTP path against a bare net/http echo of the same payload",
		Long: `Start gpuletd serve as a child (temporary state, a repository holding the
modelzoo's lenet5, a free port on loopback) and, as another child, a bare
net/http server that reads the same request body and answers the daemon's
answer's bytes (--echo-in-process runs it in this process instead, as
releases before 2026-11-26 did: it is then spared waking a second process,
which the daemon is not). Drive both with the same open-loop generator at the same rate,
one after the other, and compare latency.

The rate is found first (unless --rate is given): from 200 requests/s, doubled
while the daemon's p99 stays under the model's SLO (99% of the requests
answered within it, failures counted as misses), up to --max-rate. overhead_p50_us is the daemon's p50 minus the echo's p50 minus the
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
				return err
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
	if grpc {
		cmd.Use, cmd.Short = "grpc", "The daemon's gRPC path against a bare gRPC server answering the same answer"
		cmd.Long = `bench http for the gRPC listener: the daemon's ModelInfer (inputs in
raw_input_contents) against a bare gRPC server of the same service that
decodes the request and answers the daemon's first answer, driven by the
same open-loop generator at the same rate, one after the other.
overhead_p50_us is the daemon's p50 minus the bare server's minus the mean
time a request spent in the executor. The refusal run of bench http is not
made (the generator does not time gRPC errors).`
	} else {
		f.BoolVar(&o.Binary, "binary", false, "binary tensors instead of JSON")
	}
	f.BoolVar(&o.InProcessEcho, "echo-in-process", false, "run the bare server in this process (the measurement of earlier releases)")
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
	tw := newTable(bw)
	if r.Protocol == "grpc" {
		fmt.Fprintf(tw, "gRPC path\tgpuletd serve against a bare gRPC server\n")
	} else {
		fmt.Fprintf(tw, "HTTP path\tgpuletd serve against a bare net/http echo\n")
	}
	fmt.Fprintf(tw, "device\t%s, policy %s\n", r.Device, r.Policy)
	if r.DeviceNote != "" {
		fmt.Fprintf(tw, "not on the CPU\t%s\n", clip(r.DeviceNote, 60))
	}
	fmt.Fprintf(tw, "workload\t%s, %s tensors, %d-byte requests, %.0f-byte answers\n", r.Model, r.Tensors, r.RequestBytes, r.ResponseBytes)
	fmt.Fprintf(tw, "rate\tPoisson %g requests/s, %gs for each server\n", r.Rate, r.DurationS)
	if r.Echo == "in-process" {
		fmt.Fprintf(tw, "echo\tin the bench's process (spared a process wake-up)\n")
	} else {
		fmt.Fprintf(tw, "echo\ta process of its own, as the daemon\n")
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(bw)
	tw = newTable(bw)
	fmt.Fprintln(tw, "\tP50\tP90\tP99\tMAX\tOK")
	fmt.Fprintf(tw, "daemon\t%s\t%s\t%s\t%s\t%d of %d\n", usStr(r.DaemonP50US), usStr(r.DaemonP90US), usStr(r.DaemonP99US), usStr(r.DaemonMaxUS), r.DaemonOK, r.DaemonSent)
	fmt.Fprintf(tw, "echo\t%s\t%s\t%s\t%s\t%d\n", usStr(r.EchoP50US), usStr(r.EchoP90US), usStr(r.EchoP99US), usStr(r.EchoMaxUS), r.EchoOK)
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(bw)
	met := "met"
	if !r.FloorMet {
		met = "MISSED"
	}
	tw = newTable(bw)
	fmt.Fprintf(tw, "executor time, mean\t%s\tqueue + compute in the executor\n", usStr(r.ExecutorMeanUS))
	fmt.Fprintf(tw, "overhead p50\t%s\tdaemon − echo − executor; floor %s: %s\n", usStr(r.OverheadP50US), usStr(r.FloorUS), met)
	if r.RefuseP50US > 0 {
		fmt.Fprintf(tw, "  read, decode, refuse\t%s\ta decoded request refused with 400, − echo\n", usStr(r.DecodeP50US))
		fmt.Fprintf(tw, "  route, hop, encode\t%s\tthe rest\n", usStr(r.HopP50US))
	}
	if r.HopMeanUS > 0 {
		fmt.Fprintf(tw, "  executor hop, mean\t%s\tthe hop outside the executor: wake-ups, framing\n", usStr(r.HopMeanUS))
	}
	fmt.Fprintf(tw, "answered\t%.0f/s\tSLO %gms, attainment %.1f%%\n", r.RequestsPerSecond, r.SLOMS, 100*r.DaemonAttainment)
	fmt.Fprintf(tw, "CPU per request\t%s\tdaemon; executor %s; echo %s\n", cpuStr(r.DaemonCPUUS), cpuStr(r.ExecutorCPUUS), cpuStr(r.EchoCPUUS))
	fmt.Fprintf(tw, "  net of idle\t%s\tdaemon; executor %s\n", cpuStr(r.DaemonNetCPUUS), cpuStr(r.ExecutorNetCPUUS))
	fmt.Fprintf(tw, "allocations\t%s\n", allocStr(r.DaemonAllocs, r.DaemonAllocBytes))
	fmt.Fprintf(tw, "CPU when idle\t%s\tof a core, daemon; executor %s\n", coreStr(r.DaemonIdleCPU), coreStr(r.ExecutorIdleCPU))
	if r.Reorganizations > 0 {
		fmt.Fprintf(tw, "reorganizations\t%d\tduring the measurement: they disturb it\n", r.Reorganizations)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
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

// allocStr is the daemon's allocations per request, objects then bytes, as
// the value and description columns.
func allocStr(objects, bytes float64) string {
	if objects < 0 {
		return "unknown\tdaemon, per request"
	}
	return fmt.Sprintf("%.0f\tobjects of the daemon per request, %.1f KiB", objects, bytes/1024)
}
