package main

import (
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// perfAnalyzerFlags are perf_analyzer's spellings of what gpuletd load
// does under its own flags, so that a command line written for
// perf_analyzer runs as it was written (-m, -x, -f, -b, -H, -i and the
// ranges are named as perf_analyzer names them already).
type perfAnalyzerFlags struct {
	distribution string // --request-distribution
	intervals    string // --request-intervals
	sharedMemory string // --shared-memory
	server       string // -u
	intervalMS   int    // -p
}

// perfAnalyzerAliases are perf_analyzer's flag names that name one of
// gpuletd load's own flags.
var perfAnalyzerAliases = map[string]string{"request-rate-range": "rate-range"}

// register adds the flags to cmd, and perf_analyzer's names for its own.
func (p *perfAnalyzerFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&p.distribution, "request-distribution", "", "constant or poisson: --arrival's, as perf_analyzer's --request-distribution names them")
	f.StringVar(&p.intervals, "request-intervals", "", "a file of the gaps between requests, in microseconds a line, sent at those gaps and again from the first, as perf_analyzer's --request-intervals: --arrival intervals:FILE")
	f.StringVar(&p.sharedMemory, "shared-memory", "", "none, system (--shm) or cuda (--cuda-shm), as perf_analyzer's --shared-memory")
	f.IntVarP(&p.intervalMS, "measurement-interval", "p", 0, "milliseconds measured, as perf_analyzer's -p: --duration (gpuletd measures one window of it, where perf_analyzer repeats windows until they agree)")
	f.StringVarP(&p.server, "server-url", "u", "", "the server's address for the protocol -i names, as perf_analyzer's -u: with -i grpc the gRPC listener's (as --grpc; the model's metadata is still read over REST), else the REST URL (as --url)")
	f.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if own, ok := perfAnalyzerAliases[name]; ok {
			return pflag.NormalizedName(own)
		}
		return pflag.NormalizedName(name)
	})
	_ = cmd.RegisterFlagCompletionFunc("request-distribution", cobra.FixedCompletions([]string{"constant", "poisson"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("shared-memory", cobra.FixedCompletions([]string{"none", "system", "cuda"}, cobra.ShellCompDirectiveNoFileComp))
}

// address sets --url or --grpc from -u, as the protocol -i names decides;
// -u given beside the flag it stands for is refused.
func (p *perfAnalyzerFlags) address(cmd *cobra.Command, protocol string, url, grpcAddr *string) error {
	f := cmd.Flags()
	if !f.Changed("server-url") {
		return nil
	}
	flag, into := "url", url
	if strings.EqualFold(protocol, "grpc") {
		flag, into = "grpc", grpcAddr
	}
	if f.Changed(flag) {
		return usageErrorf("load: -u is --%s here: give one of them", flag)
	}
	*into = p.server
	return nil
}

// apply folds the flags given into gpuletd's own: the arrival process,
// the shared memory and the measured time. One given both ways is refused.
func (p *perfAnalyzerFlags) apply(cmd *cobra.Command, arrival *string, shm, cudaShm *bool, duration *time.Duration) error {
	f := cmd.Flags()
	if f.Changed("measurement-interval") {
		if p.intervalMS <= 0 {
			return usageErrorf("load: --measurement-interval %d: give a positive number of milliseconds", p.intervalMS)
		}
		if f.Changed("duration") {
			return usageErrorf("load: give --duration or --measurement-interval (-p), not both")
		}
		*duration = time.Duration(p.intervalMS) * time.Millisecond
	}
	if f.Changed("request-distribution") {
		d := strings.ToLower(strings.TrimSpace(p.distribution))
		if d != "constant" && d != "poisson" {
			return usageErrorf("load: --request-distribution %q: give constant or poisson (other processes: --arrival)", p.distribution)
		}
		if f.Changed("arrival") {
			return usageErrorf("load: give --arrival or --request-distribution, not both")
		}
		*arrival = d
	}
	if f.Changed("request-intervals") {
		if f.Changed("arrival") || f.Changed("request-distribution") {
			return usageErrorf("load: --request-intervals is the arrival process: give no --arrival or --request-distribution with it")
		}
		*arrival = "intervals:" + p.intervals
	}
	if f.Changed("shared-memory") {
		if f.Changed("shm") || f.Changed("cuda-shm") {
			return usageErrorf("load: give --shared-memory or --shm/--cuda-shm, not both")
		}
		switch strings.ToLower(strings.TrimSpace(p.sharedMemory)) {
		case "none":
		case "system":
			*shm = true
		case "cuda":
			*cudaShm = true
		default:
			return usageErrorf("load: --shared-memory %q: give none, system or cuda", p.sharedMemory)
		}
	}
	return nil
}

// perfAnalyzerNames is the help's line on the flags above.
const perfAnalyzerNames = `perf_analyzer's names work too: -m (--model), -x (--model-version), -f
(--csv; with --csv-format perf_analyzer in perf_analyzer's columns), -i
(--protocol), -u (--url, or with -i grpc --grpc), --request-rate-range
(--rate-range), -p (--duration, in milliseconds), --request-distribution
constant|poisson (--arrival), --request-intervals FILE (--arrival
intervals:FILE) and --shared-memory none|system|cuda (--shm, --cuda-shm).`
