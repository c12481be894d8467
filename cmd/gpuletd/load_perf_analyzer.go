package main

import (
	"cmp"
	"fmt"
	"strconv"
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
	thresholdMS  int    // --latency-threshold
	percentile   int    // --percentile
	inputFormat  string // --input-tensor-format
	outputFormat string // --output-tensor-format
	async, sync  bool   // -a, --sync
	grpcCodec    string // --grpc-compression-algorithm
	zero         bool   // -z
	serviceKind  string // --service-kind
	verbose      bool   // -v
	// Taken and said to be ignored: --max-threads, --output-shared-memory-size.
	maxThreads, outputShmSize int
	// -t, -c and -d.
	old deprecatedPerfAnalyzerFlags
}

// refusedPerfAnalyzerFlags are perf_analyzer's flags whose meaning gpuletd
// load cannot give, and why: a command line with one is refused with that,
// rather than as an unknown flag.
var refusedPerfAnalyzerFlags = []struct{ name, why string }{
	{"periodic-concurrency-range", "it raises the concurrency every --request-period answers, for streamed LLM answers; gpuletd load measures each concurrency of --concurrency-range in turn"},
	{"request-period", "it paces --periodic-concurrency-range, which gpuletd load does not run"},
	{"bls-composing-models", "it names the models a Python BLS model calls; gpuletd runs no Python models (a pipeline's steps are in its status)"},
	{"triton-server-directory", "it runs Triton in perf_analyzer's process (--service-kind triton_c_api); gpuletd load sends to a running server"},
	{"model-repository", "it runs Triton in perf_analyzer's process (--service-kind triton_c_api); gpuletd load sends to a running server, whose repository is its own"},
	{"model-signature-name", "it is TensorFlow Serving's (--service-kind tfserving); gpuletd load speaks the KServe v2 protocol"},
}

// ignoredPerfAnalyzerFlags are perf_analyzer's flags for its own machinery
// that gpuletd load takes and ignores, and why.
var ignoredPerfAnalyzerFlags = []struct{ name, why string }{
	{"max-threads", "gpuletd load sends each request in flight from a goroutine of its own, as many as --concurrency"},
	{"output-shared-memory-size", "gpuletd load sizes each output's region from the model's shapes, or from one answer when they vary"},
}

// loadFloor is what gpuletd load judges a run or a sweep's step by: the
// latency its answers are counted within, and the share that must be.
type loadFloor struct {
	slo           *time.Duration
	minAttainment *float64
	// meanBound is perf_analyzer's --latency-threshold without a
	// percentile: every model's mean latency at most this.
	meanBound *time.Duration
}

// perfAnalyzerAliases are perf_analyzer's flag names that name one of
// gpuletd load's own flags.
var perfAnalyzerAliases = map[string]string{"request-rate-range": "rate-range", "data-directory": "input-data"}

// register adds the flags to cmd, and perf_analyzer's names for its own.
func (p *perfAnalyzerFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&p.distribution, "request-distribution", "", "constant or poisson: --arrival's, as perf_analyzer's --request-distribution names them")
	f.StringVar(&p.intervals, "request-intervals", "", "a file of the gaps between requests, in microseconds a line, sent at those gaps and again from the first, as perf_analyzer's --request-intervals: --arrival intervals:FILE")
	f.StringVar(&p.sharedMemory, "shared-memory", "", "none, system (--shm) or cuda (--cuda-shm), as perf_analyzer's --shared-memory")
	f.IntVarP(&p.intervalMS, "measurement-interval", "p", 0, "milliseconds measured, as perf_analyzer's -p: --duration (one window of it; with -s or -r, windows of it until the last three agree)")
	f.IntVarP(&p.thresholdMS, "latency-threshold", "l", 0, "milliseconds, as perf_analyzer's: a step holds while every model's mean latency is within them, or with --percentile P while P% of its requests are answered within them (--slo and --min-attainment P/100), and a sweep stops at the first that does not")
	f.IntVar(&p.percentile, "percentile", 0, "the percentile --latency-threshold bounds, and the latency measurement windows compare (-s), as perf_analyzer's (the report gives p50, p90, p95 and p99 whatever it is)")
	f.StringVar(&p.inputFormat, "input-tensor-format", "", "binary or json, as perf_analyzer's: --binary or --binary=false (which asks for answers in the same format)")
	f.StringVar(&p.outputFormat, "output-tensor-format", "", "binary or json, as perf_analyzer's: the same as --input-tensor-format, which gpuletd load ties it to")
	f.BoolVarP(&p.async, "async", "a", false, "as perf_analyzer's: gpuletd load always sends without waiting for earlier answers, a closed loop keeping --concurrency in flight as perf_analyzer's threads do either way")
	f.BoolVar(&p.sync, "sync", false, "as perf_analyzer's: the same load as --async (a closed loop of --concurrency in flight)")
	f.StringVar(&p.grpcCodec, "grpc-compression-algorithm", "", "none, gzip or deflate, as perf_analyzer's: --compression (over REST too)")
	f.BoolVarP(&p.zero, "zero-input", "z", false, "as perf_analyzer's -z: --input-data zero")
	f.StringVar(&p.serviceKind, "service-kind", "", "triton, as perf_analyzer's --service-kind: gpuletd load speaks the KServe v2 protocol Triton and gpuletd serve (the only kind taken)")
	f.BoolVarP(&p.verbose, "verbose", "v", false, "as perf_analyzer's -v: also print what every measurement window measured (-s, -r)")
	for _, r := range refusedPerfAnalyzerFlags {
		f.String(r.name, "", "perf_analyzer's, refused: "+r.why)
		_ = f.MarkHidden(r.name)
	}
	f.IntVar(&p.maxThreads, "max-threads", 0, "as perf_analyzer's: taken and ignored (requests go from goroutines, as many as --concurrency)")
	f.IntVar(&p.outputShmSize, "output-shared-memory-size", 0, "as perf_analyzer's: taken and ignored (each output's region is sized from the model's shapes, or from one answer)")
	f.StringVarP(&p.server, "server-url", "u", "", "the server's address for the protocol -i names, as perf_analyzer's -u: with -i grpc the gRPC listener's (as --grpc: the model's metadata and SLO are read there too), else the REST URL (as --url)")
	p.old.register(cmd)
	f.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if own, ok := perfAnalyzerAliases[name]; ok {
			return pflag.NormalizedName(own)
		}
		return pflag.NormalizedName(name)
	})
	_ = cmd.RegisterFlagCompletionFunc("request-distribution", cobra.FixedCompletions([]string{"constant", "poisson"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("shared-memory", cobra.FixedCompletions([]string{"none", "system", "cuda"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("grpc-compression-algorithm", cobra.FixedCompletions([]string{"none", "gzip", "deflate"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("service-kind", cobra.FixedCompletions([]string{"triton"}, cobra.ShellCompDirectiveNoFileComp))
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
// the shared memory, the measured time and the floor. One given both ways
// is refused.
func (p *perfAnalyzerFlags) apply(cmd *cobra.Command, arrival *string, shm, cudaShm *bool, duration *time.Duration, floor loadFloor) error {
	f := cmd.Flags()
	if err := p.applyFloor(f, floor); err != nil {
		return err
	}
	if err := p.applyFormats(f); err != nil {
		return err
	}
	if p.async && p.sync {
		return usageErrorf("load: give --async or --sync, not both")
	}
	for _, r := range refusedPerfAnalyzerFlags {
		if f.Changed(r.name) {
			return usageErrorf("load: --%s is perf_analyzer's, and gpuletd load cannot do what it asks: %s", r.name, r.why)
		}
	}
	for _, ig := range ignoredPerfAnalyzerFlags {
		if f.Changed(ig.name) {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: --%s is taken and ignored: %s\n", ig.name, ig.why)
		}
	}
	if err := p.applyAliases(f); err != nil {
		return err
	}
	if err := p.old.apply(f); err != nil {
		return err
	}
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
(--rate-range), -p (--duration, in milliseconds; with -s or -r each of the
windows measured until the last three agree), --request-distribution
constant|poisson (--arrival), --request-intervals FILE (--arrival
intervals:FILE), -l/--latency-threshold MS (every model's mean latency
within MS; with --percentile P, --slo MS --min-attainment P/100), --input-tensor-format and --output-tensor-format
binary|json (--binary), --shared-memory none|system|cuda (--shm,
--cuda-shm), --grpc-compression-algorithm (--compression), -z and
--data-directory DIR (--input-data zero, DIR), --service-kind triton,
-a/--async or --sync (the same load: N in flight), perf_analyzer's
measurement: -s/--stability-percentage, -r/--max-trials, --measurement-mode,
--measurement-request-count (windows until the last three agree, which the
report counts; -v prints each) and --warmup-request-count, and for a
stateful model --sequence-length-variation, --sequence-id-range and
--serial-sequences; the older -t N (--concurrency N) and -d -c N
(--concurrency-range 1:N); the trace options --trace-level, --trace-rate,
--trace-count, --log-frequency and --trace-file, set on the server for the
model before the run; --profile-export-file, every request's times as
perf_analyzer exports them. --max-threads and --output-shared-memory-size are
taken and ignored.`

// applyAliases folds perf_analyzer's spellings that set one flag of
// gpuletd load's into it: --grpc-compression-algorithm (--compression),
// -z (--input-data zero), and checks --service-kind.
func (p *perfAnalyzerFlags) applyAliases(f *pflag.FlagSet) error {
	if f.Changed("service-kind") && !strings.EqualFold(strings.TrimSpace(p.serviceKind), "triton") {
		return usageErrorf("load: --service-kind %q: gpuletd load speaks the KServe v2 protocol that Triton and gpuletd serve (--service-kind triton); it does not send to %s", p.serviceKind, p.serviceKind)
	}
	if f.Changed("grpc-compression-algorithm") {
		codec := strings.ToLower(strings.TrimSpace(p.grpcCodec))
		switch {
		case f.Changed("compression"):
			return usageErrorf("load: give --compression or --grpc-compression-algorithm, not both")
		case codec == "none":
		case codec == "gzip" || codec == "deflate":
			if err := f.Set("compression", codec); err != nil {
				return err
			}
		default:
			return usageErrorf("load: --grpc-compression-algorithm %q: give none, gzip or deflate", p.grpcCodec)
		}
	}
	if p.zero {
		if f.Changed("input-data") {
			return usageErrorf("load: -z is --input-data zero: give one")
		}
		if err := f.Set("input-data", inputZero); err != nil {
			return err
		}
	}
	return nil
}

// applyFloor turns --latency-threshold and --percentile into --slo and
// --min-attainment: P% of the requests within the threshold. perf_analyzer
// bounds the mean latency without --percentile; gpuletd judges by a share
// of answers, so it asks for one.
func (p *perfAnalyzerFlags) applyFloor(f *pflag.FlagSet, floor loadFloor) error {
	threshold, percentile := f.Changed("latency-threshold"), f.Changed("percentile")
	if percentile && !(p.percentile > 0 && p.percentile < 100) {
		return usageErrorf("load: --percentile %d: give a percentile between 1 and 99", p.percentile)
	}
	if !threshold {
		return nil // --percentile alone: every report gives p50 to p99
	}
	switch {
	case p.thresholdMS <= 0:
		return usageErrorf("load: --latency-threshold %d: give a positive number of milliseconds", p.thresholdMS)
	case !percentile:
		// perf_analyzer's own rule: the mean latency within the
		// threshold, judged alone unless --min-attainment asks for a
		// share within the SLO too.
		*floor.meanBound = time.Duration(p.thresholdMS) * time.Millisecond
		if !f.Changed("min-attainment") {
			*floor.minAttainment = 0
		}
		return nil
	case f.Changed("slo") || f.Changed("min-attainment"):
		return usageErrorf("load: --latency-threshold with --percentile sets --slo and --min-attainment: give one or the other")
	}
	*floor.slo = time.Duration(p.thresholdMS) * time.Millisecond
	*floor.minAttainment = float64(p.percentile) / 100
	return nil
}

// judged says a single run is judged against a floor: --min-attainment,
// or perf_analyzer's --latency-threshold, given.
func judged(f *pflag.FlagSet) bool {
	return f.Changed("min-attainment") || f.Changed("latency-threshold")
}

// applyFormats turns perf_analyzer's tensor formats into --binary, which
// sends binary tensors and asks for binary answers, or neither.
func (p *perfAnalyzerFlags) applyFormats(f *pflag.FlagSet) error {
	in, out := strings.ToLower(p.inputFormat), strings.ToLower(p.outputFormat)
	for _, v := range []struct{ flag, value string }{{"input-tensor-format", in}, {"output-tensor-format", out}} {
		if f.Changed(v.flag) && v.value != "binary" && v.value != "json" {
			return usageErrorf("load: --%s %q: give binary or json", v.flag, v.value)
		}
	}
	format := cmp.Or(in, out)
	switch {
	case format == "":
		return nil
	case in != "" && out != "" && in != out:
		return usageErrorf("load: gpuletd load asks for answers in the format it sends: give --input-tensor-format and --output-tensor-format alike")
	case f.Changed("binary"):
		return usageErrorf("load: give --binary or the tensor formats, not both")
	}
	return f.Set("binary", strconv.FormatBool(format == "binary"))
}
