package main

import (
	"cmp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// TestPerfAnalyzerFlags: perf_analyzer's spellings set gpuletd load's own
// flags, and one given both ways, or a value gpuletd does not have, is
// refused.
func TestPerfAnalyzerFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		arrival string
		shm     bool
		cudaShm bool
		rates   string
		lasts   time.Duration
		slo     time.Duration
		share   float64
		noShare bool          // the share is not judged (0)
		mean    time.Duration // the bound on the mean latency
		binary  string        // "" when --binary is left unset
		err     string
	}{
		{name: "none given", args: nil, arrival: "poisson"},
		{name: "constant", args: []string{"--request-distribution", "constant"}, arrival: "constant"},
		{name: "Poisson", args: []string{"--request-distribution=Poisson"}, arrival: "poisson"},
		{name: "system shared memory", args: []string{"--shared-memory", "system"}, arrival: "poisson", shm: true},
		{name: "CUDA shared memory", args: []string{"--shared-memory=cuda"}, arrival: "poisson", cudaShm: true},
		{name: "no shared memory", args: []string{"--shared-memory=none"}, arrival: "poisson"},
		{name: "the rate range by perf_analyzer's name", args: []string{"--request-rate-range", "100:500:100"}, arrival: "poisson", rates: "100:500:100"},
		{name: "the measurement window", args: []string{"-p", "5000"}, arrival: "poisson", lasts: 5 * time.Second},
		{name: "a window of nothing", args: []string{"-p", "0"}, err: "--measurement-interval 0: give a positive number of milliseconds"},
		{name: "both windows", args: []string{"-p", "5000", "--duration", "3s"}, err: "give --duration or --measurement-interval (-p), not both"},
		{name: "intervals from a file", args: []string{"--request-intervals", "gaps.txt"}, arrival: "intervals:gaps.txt"},
		{name: "intervals and an arrival process", args: []string{"--request-intervals", "gaps.txt", "--arrival", "poisson"}, err: "--request-intervals is the arrival process"},
		{name: "a threshold on p95", args: []string{"--latency-threshold", "20", "--percentile", "95"}, arrival: "poisson", slo: 20 * time.Millisecond, share: 0.95},
		{name: "a percentile alone", args: []string{"--percentile=95"}, arrival: "poisson"},
		{name: "a threshold on the mean", args: []string{"--latency-threshold", "20"}, arrival: "poisson", mean: 20 * time.Millisecond, noShare: true},
		{name: "a threshold on the mean and a share", args: []string{"-l", "20", "--min-attainment", "0.9"}, arrival: "poisson", mean: 20 * time.Millisecond, share: 0.9},
		{name: "a threshold and an SLO", args: []string{"--latency-threshold", "20", "--percentile", "99", "--slo", "5ms"}, err: "sets --slo and --min-attainment: give one or the other"},
		{name: "a percentile of all", args: []string{"--percentile", "100"}, err: "--percentile 100: give a percentile between 1 and 99"},
		{name: "no threshold", args: []string{"--latency-threshold", "0", "--percentile", "99"}, err: "--latency-threshold 0: give a positive number"},
		{name: "binary tensors", args: []string{"--input-tensor-format", "binary", "--output-tensor-format=binary"}, arrival: "poisson", binary: "true"},
		{name: "JSON tensors", args: []string{"--output-tensor-format", "JSON"}, arrival: "poisson", binary: "false"},
		{name: "mixed formats", args: []string{"--input-tensor-format", "binary", "--output-tensor-format", "json"}, err: "give --input-tensor-format and --output-tensor-format alike"},
		{name: "a format twice", args: []string{"--input-tensor-format", "json", "--binary"}, err: "give --binary or the tensor formats, not both"},
		{name: "an unknown format", args: []string{"--input-tensor-format", "protobuf"}, err: `--input-tensor-format "protobuf": give binary or json`},
		{name: "async", args: []string{"-a"}, arrival: "poisson"},
		{name: "sync", args: []string{"--sync"}, arrival: "poisson"},
		{name: "async and sync", args: []string{"--async", "--sync"}, err: "give --async or --sync, not both"},
		{name: "an unknown distribution", args: []string{"--request-distribution", "uniform"}, err: `--request-distribution "uniform": give constant or poisson`},
		{name: "both arrival flags", args: []string{"--request-distribution", "constant", "--arrival", "gamma:2"}, err: "give --arrival or --request-distribution, not both"},
		{name: "an unknown memory", args: []string{"--shared-memory", "gpu"}, err: `--shared-memory "gpu": give none, system or cuda`},
		{name: "both memory flags", args: []string{"--shared-memory", "system", "--cuda-shm"}, err: "give --shared-memory or --shm/--cuda-shm, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, f, err := applyPerfAnalyzer(t, tc.args)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.arrival, got.arrival)
			require.Equal(t, tc.shm, got.shm)
			require.Equal(t, tc.cudaShm, got.cudaShm)
			require.Equal(t, tc.rates, got.rates)
			require.Equal(t, cmp.Or(tc.lasts, 10*time.Second), got.duration)
			require.Equal(t, tc.slo, got.slo)
			if tc.noShare {
				require.Zero(t, got.share)
			} else {
				require.Equal(t, cmp.Or(tc.share, 0.99), got.share)
			}
			require.Equal(t, tc.mean, got.mean)
			require.Equal(t, tc.slo != 0 || tc.mean != 0, judged(f), "a threshold is a floor a single run is judged by")
			require.Equal(t, tc.binary != "", f.Changed("binary"))
			if tc.binary != "" {
				require.Equal(t, tc.binary, f.Lookup("binary").Value.String())
			}
		})
	}
}

// TestPerfAnalyzerServerURL: -u is the address of the protocol -i names.
func TestPerfAnalyzerServerURL(t *testing.T) {
	for _, tc := range []struct {
		name, protocol string
		args           []string
		url, grpc, err string
	}{
		{name: "not given", args: nil},
		{name: "REST", args: []string{"-u", "localhost:8000"}, url: "localhost:8000"},
		{name: "gRPC", protocol: "grpc", args: []string{"-u", "localhost:8001"}, grpc: "localhost:8001"},
		{name: "REST twice", args: []string{"-u", "a:1", "--url", "b:2"}, err: "-u is --url here"},
		{name: "gRPC twice", protocol: "GRPC", args: []string{"-u", "a:1", "--grpc", "b:2"}, err: "-u is --grpc here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				pa        perfAnalyzerFlags
				url, grpc string
			)
			cmd := &cobra.Command{Use: "load"}
			cmd.Flags().StringVar(&url, "url", "", "")
			cmd.Flags().StringVar(&grpc, "grpc", "", "")
			pa.register(cmd)
			require.NoError(t, cmd.Flags().Parse(tc.args))
			err := pa.address(cmd, tc.protocol, &url, &grpc)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			if tc.url != "" {
				require.Equal(t, tc.url, url)
			}
			if tc.grpc != "" {
				require.Equal(t, tc.grpc, grpc)
			}
			if tc.url == "" && tc.grpc == "" {
				require.Empty(t, url+grpc)
			}
		})
	}
}

// TestLoadRefusesARateBesideItsOwn: arrivals that carry their own rate
// (intervals, a trace at a scale of its own) take no --rate, which would
// otherwise be dropped without a word.
func TestLoadRefusesARateBesideItsOwn(t *testing.T) {
	for _, args := range [][]string{
		{"--request-intervals", "gaps.txt", "--rate", "100"},
		{"--arrival", "trace:azure.csv@2", "--rate", "100"},
	} {
		code, _, stderr := runCLI(t, append([]string{"load", "-m", "lenet5", "--url", "http://127.0.0.1:9"}, args...)...)
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, "sends at its file's own rate (times the scale after @): give no --rate", args)
	}
}

// TestLoadRefusesACSVItCannotWrite: the CSV's format, and counts given
// as none, are checked before any daemon is asked (none answers at this
// address).
func TestLoadRefusesACSVItCannotWrite(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"-m", "lenet5", "-f", "x.csv", "--csv-format", "tsv"}, `--csv-format "tsv": give gpuletd or perf_analyzer`},
		{[]string{"-m", "lenet5", "--csv-format", "perf_analyzer"}, "--csv-format is the --csv file's: give --csv FILE (-f FILE) too"},
		{[]string{"-m", "a,b", "-f", "x.csv", "--csv-format", "perf_analyzer"}, "holds one model's rows, as perf_analyzer measures one model, and 2 are given"},
		{[]string{"-m", "lenet5", "--concurrency", "0"}, "--concurrency 0: give 1 or more"},
		{[]string{"-m", "lenet5", "-b", "0"}, "--batch-size 0: give 1 or more"},
		{[]string{"-m", "lenet5", "--inputs", "-1"}, "--inputs -1: give 1 or more"},
		{[]string{"-m", "lenet5", "--request-count", "0"}, "--request-count 0: give 1 or more"},
	} {
		code, _, stderr := runCLI(t, append([]string{"load", "--rate", "10", "--url", "http://127.0.0.1:9"}, tc.args...)...)
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, tc.says)
	}
}

// TestNoLoadNamedRunsAClosedLoop: a command line that names no rate,
// arrival process or range runs perf_analyzer's default, one request in
// flight; any of them names the load.
func TestNoLoadNamedRunsAClosedLoop(t *testing.T) {
	for _, tc := range []struct {
		args []string
		none bool
	}{
		{args: []string{"-m", "lenet5"}, none: true},
		{args: []string{"-m", "lenet5,mlp", "-p", "2000", "--concurrency", "4"}, none: true},
		{args: []string{"-m", "lenet5", "--rate", "50"}},
		{args: []string{"-m", "lenet5=50"}},
		{args: []string{"-m", "lenet5", "-m", "mlp=20"}},
		{args: []string{"-m", "lenet5", "--arrival", "gamma:0.5"}},
		{args: []string{"-m", "lenet5", "--request-distribution", "constant"}},
		{args: []string{"-m", "lenet5", "--request-intervals", "gaps.txt"}},
		{args: []string{"-m", "lenet5", "--request-rate-range", "10:50:10"}},
		{args: []string{"-m", "lenet5", "--concurrency-range", "1:4"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := newLoadCmd(&globalFlags{})
			require.NoError(t, cmd.ParseFlags(tc.args))
			models, err := cmd.Flags().GetStringSlice("model")
			require.NoError(t, err)
			require.Equal(t, tc.none, noLoadNamed(cmd.Flags(), models))
		})
	}
}

// TestPerfAnalyzerAliases: perf_analyzer's other spellings set gpuletd
// load's flags (-l the threshold, --grpc-compression-algorithm the
// compression, -z and --data-directory the input data), and
// --service-kind takes triton alone.
func TestPerfAnalyzerAliases(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		args                   []string
		compression, data, err string
		threshold              time.Duration
	}{
		{name: "-l", args: []string{"-l", "20", "--percentile", "99"}, threshold: 20 * time.Millisecond},
		{name: "gzip over gRPC", args: []string{"--grpc-compression-algorithm", "GZIP"}, compression: "gzip"},
		{name: "no compression", args: []string{"--grpc-compression-algorithm=none"}},
		{name: "compression twice", args: []string{"--grpc-compression-algorithm", "gzip", "--compression", "deflate"}, err: "give --compression or --grpc-compression-algorithm, not both"},
		{name: "an unknown algorithm", args: []string{"--grpc-compression-algorithm", "zstd"}, err: `"zstd": give none, gzip or deflate`},
		{name: "-z", args: []string{"-z"}, data: "zero"},
		{name: "-z and data", args: []string{"-z", "--input-data", "random"}, err: "-z is --input-data zero: give one"},
		{name: "the data directory", args: []string{"--data-directory", "/tmp/d"}, data: "/tmp/d"},
		{name: "triton", args: []string{"--service-kind", "Triton"}},
		{name: "torchserve", args: []string{"--service-kind=torchserve"}, err: `--service-kind "torchserve": gpuletd load speaks the KServe v2 protocol`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := applyPerfAnalyzer(t, tc.args)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.compression, got.compression)
			require.Equal(t, cmp.Or(tc.data, "random"), got.data)
			require.Equal(t, tc.threshold, got.slo)
		})
	}
}

// appliedFlags are gpuletd load's flags that perf_analyzer's set, as
// applyPerfAnalyzer leaves them.
type appliedFlags struct {
	arrival, rates, compression, data string
	shm, cudaShm                      bool
	duration, slo, mean               time.Duration
	share                             float64
}

// applyPerfAnalyzer parses args into gpuletd load's flags that
// perf_analyzer's spellings set, at their defaults, and applies those
// spellings: the flags as they end, the flag set and apply's error.
func applyPerfAnalyzer(t *testing.T, args []string) (appliedFlags, *pflag.FlagSet, error) {
	t.Helper()
	var pa perfAnalyzerFlags
	got := appliedFlags{data: "random", duration: 10 * time.Second, share: 0.99}
	cmd := &cobra.Command{Use: "load", RunE: func(*cobra.Command, []string) error { return nil }}
	f := cmd.Flags()
	f.StringVar(&got.arrival, "arrival", "poisson", "")
	f.StringVar(&got.rates, "rate-range", "", "")
	f.StringVar(&got.compression, "compression", "", "")
	f.StringVar(&got.data, "input-data", got.data, "")
	f.BoolVar(&got.shm, "shm", false, "")
	f.BoolVar(&got.cudaShm, "cuda-shm", false, "")
	f.DurationVar(&got.duration, "duration", got.duration, "")
	f.DurationVar(&got.slo, "slo", 0, "")
	f.Float64Var(&got.share, "min-attainment", got.share, "")
	f.Bool("binary", false, "")
	pa.register(cmd)
	require.NoError(t, f.Parse(args))
	err := pa.apply(cmd, &got.arrival, &got.shm, &got.cudaShm, &got.duration, loadFloor{slo: &got.slo, minAttainment: &got.share, meanBound: &got.mean})
	return got, f, err
}

// TestPerfAnalyzerFlagsGpuletdCannotHonour: perf_analyzer's flags whose
// meaning gpuletd load cannot give are refused with why, not as unknown.
func TestPerfAnalyzerFlagsGpuletdCannotHonour(t *testing.T) {
	for _, r := range refusedPerfAnalyzerFlags {
		_, _, err := applyPerfAnalyzer(t, []string{"--" + r.name, "x"})
		require.ErrorContains(t, err, "load: --"+r.name+" is perf_analyzer's, and gpuletd load cannot do what it asks: "+r.why)
	}
}
