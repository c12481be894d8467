package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/executor/cudalibs"
	"github.com/gpulet/gpuletd/executor/cudart"
	"github.com/gpulet/gpuletd/sim/arrival"
	"github.com/gpulet/gpuletd/sim/loadgen"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newLoadCmd(g *globalFlags) *cobra.Command {
	var (
		url, grpcAddr    string
		csvFormat        string
		stringData       string
		stringLength     int
		protocol         string
		headers          []string
		models           []string
		arrivalSpec      string
		rate             float64
		duration, warmup time.Duration
		drain, timeout   time.Duration
		binary, asJSON   bool
		shm, cudaShm     bool
		pa               perfAnalyzerFlags
		wf               windowFlags
		sf               sequenceFlags
		tf               traceFlags
		exportPath       string
		mf               metricsFlags
		reqParams        requestParamsFlag
		compression      string
		version          string
		slo              time.Duration
		concurrency      int
		requestCount     int64
		priority         uint64
		batchSize        int
		streaming        bool
		inputs           int
		sequences        int
		sequenceLength   int
		shapes           shapesFlag
		inputDataFlag    []string
		seed             uint64
		csvPath          string
		sw               sweepFlags
	)
	cmd := &cobra.Command{
		Use:   "load [--model] MODEL[=RATE][,MODEL[=RATE]...] [--rate R]",
		Short: "Send a load (open loop, or closed) to a running daemon and report latency and goodput",
		Long: `Send inference requests to MODEL on a running daemon for --duration, open
loop: requests leave on the schedule of the arrival process whether or not
earlier ones were answered. At most --concurrency are in flight; a request due
while that many are in flight is dropped by this client and counted.

Inputs are random tensors of the shapes the model declares (batch 1; strings
are random 16-letter words), as JSON or, with --binary, as binary tensors
(without the flag, binary anyway where a JSON request would be over 256 KiB,
an image model's input, whose JSON numbers would be measured rather than the
server; --binary=false keeps JSON), the same ones in every request, as
perf_analyzer sends them, unless --inputs N asks for N distinct requests, sent
in turn (a model that enables the daemon's response cache answers the repeats
from it, without running, and the report then says how many it answered); with
--protocol grpc (-i grpc, as perf_analyzer's) they go to the daemon's gRPC
listener (where its status says it listens), or with --grpc HOST:PORT to that
one, as ModelInfer calls in raw_input_contents; the model's metadata, SLO and
statistics are then read there too (ModelMetadata, ModelConfig,
ModelStatistics) and shared memory registered there, so a server reached at
its gRPC port alone is measured as perf_analyzer -i grpc -u measures it.
--compression gzip (or
deflate) sends every request compressed and asks for compressed answers, over
REST or gRPC, as tritonclient's compression options do. With --shm no tensor
travels in a request: the inputs lie in a POSIX shared-memory object
registered with the daemon as a region (Triton's system shared-memory
extension, as perf_analyzer's --shared-memory=system), the outputs are written
there, and the region is unregistered and the object removed at the end;
--cuda-shm does the same with GPU memory the run allocates on GPU 0 and
registers by its CUDA IPC handle (Triton's CUDA shared-memory extension, as
perf_analyzer's --shared-memory=cuda; it needs the CUDA 13 runtime,
libcudart.so.13, where the loader finds it). The
report gives the requests sent, the answers by status, goodput (answers within
the model's SLO per second), SLO attainment, latency percentiles, the achieved
send rate and the schedule lag. A run given --min-attainment exits 1 when a
model answered less than that share of its requests due within its SLO (a
smoke test after a deployment: gpuletd load MODEL --rate R --min-attainment 0.99).

--streaming, over gRPC, sends every request over one ModelStreamInfer
stream (bidirectional, answers matched by request id), as perf_analyzer's
--streaming does; without it each request is a ModelInfer call.

--batch-size N (-b N) sends N rows in every request, as perf_analyzer's -b
(at most the model's max_batch_size): the report counts requests, and its
goodput gives the rows too.

--priority N sends every request at priority level N of the model's
(dynamic_batching.priority_levels; 1 the highest): two runs side by side, one
at each level, show what each level keeps at overload.

The SLO the report counts answers within is the daemon's for each model;
--slo gives another, and is needed against a server that gives none, such as
Triton, so that the same load measures both.

Several models (--model a=100,b=300, or --model repeated) are loaded at once,
each on its own arrivals at its own rate; --rate then scales the rates to that
total (or splits it equally when no model gives one). The report has a line
per model and their sum.

Arrivals: poisson, constant (even gaps, perf_analyzer's default),
gamma:<shape>, gamma:shape=<k>, gamma:cv=<c>,
trace:<file> (replayed at --rate) or trace:<file>@<scale> (at <scale> times
the trace's own rate), such as the Azure LLM traces' CSV files;
intervals:<file> (a file of gaps in microseconds, a line each, as
perf_analyzer's --request-intervals, sent at those gaps; @<scale> as for a
trace); or closed:
a closed loop, as perf_analyzer's concurrency mode, where --concurrency
requests (default 1) are always in flight, each sent as soon as the last is
answered, and no --rate is given. A command line that names no load (no
rate, arrival process or range) runs that closed loop, as perf_analyzer -m
MODEL measures with one request in flight.

A stateful model's requests (sequence_batching) go in sequences, as
perf_analyzer sends them: --num-of-sequences live at once, each of
--sequence-length requests (the first starts it, the last ends it, one in
flight at a time); a request due while every sequence has one in flight
waits for one (the schedule lag shows it).

A sweep finds how much load the server keeps within its SLOs, as
perf_analyzer's ranges do: --rate-range START[:END[:STEP]] runs the load at
each total rate in turn (a mix keeps its models' proportions), and
--concurrency-range START[:END[:STEP]] a closed loop at each concurrency (an
END of 0 goes up by STEP with no end, as perf_analyzer's), each step for
--warmup (5s unless given: time for the daemon to re-plan for the step's rate)
and then --duration. A step holds when every model answered at least
--min-attainment (0.99) of its requests due within its SLO, a request this
client could not send counted as a miss (with perf_analyzer's -l MS alone,
while every model's mean latency is within MS); the sweep stops at the first
step that does not hold (--whole-range: runs every step, to draw the curve
past it), or, with --binary-search, bisects the range for the highest that
holds, to within STEP. A row is printed as each step ends, then the highest
step that held and the lowest that did not.

--csv FILE writes the report to FILE as comma-separated rows under a header,
as perf_analyzer's -f does: a row per model (and their total for a mix) with
its counts, goodput, attainment and latency percentiles (p50, p90, p95, p99,
max, mean in microseconds), and in a sweep those rows for every step as it
ends, with the step's rate or concurrency and whether it held.

` + perfAnalyzerNames,
		Args:              argsForFlag("model", 0),
		ValidArgsFunction: g.completeModelList,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			if len(models) == 0 {
				return usageErrorf("load needs a model: gpuletd load MODEL (several: MODEL=RATE MODEL=RATE, or --model with the same)")
			}
			for _, n := range []struct {
				flag  string
				value int
			}{{"concurrency", concurrency}, {"batch-size", batchSize}, {"inputs", inputs}} {
				if cmd.Flags().Changed(n.flag) && n.value < 1 {
					return usageErrorf("load: --%s %d: give 1 or more", n.flag, n.value)
				}
			}
			if version != "" && len(models) > 1 {
				return usageErrorf("load: --model-version %s is a version of one model, and %d are given", version, len(models))
			}
			if err := pa.apply(cmd, &arrivalSpec, &shm, &cudaShm, &duration, loadFloor{slo: &slo, minAttainment: &sw.minAttainment, meanBound: &sw.meanBound}); err != nil {
				return err
			}
			if err := pa.address(cmd, protocol, &url, &grpcAddr); err != nil {
				return err
			}
			if err := mf.check(cmd); err != nil {
				return err
			}
			windows, err := wf.windows(cmd, len(models))
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("request-count") {
				if requestCount < 1 {
					return usageErrorf("load: --request-count %d: give 1 or more", requestCount)
				}
				if !cmd.Flags().Changed("duration") && !cmd.Flags().Changed("measurement-interval") {
					duration = requestCountBound // the count ends the run
				}
			}
			if noLoadNamed(cmd.Flags(), models) {
				arrivalSpec = arrivalClosed
			}
			if s, err := arrival.Parse(arrivalSpec); err == nil && s.Kind == arrival.KindTrace && s.Scale > 0 && cmd.Flags().Changed("rate") {
				return usageErrorf("load: --arrival %s sends at its file's own rate (times the scale after @): give no --rate", arrivalSpec)
			}
			switch {
			case csvFormat != csvFormatGpuletd && csvFormat != csvFormatPerfAnalyzer:
				return usageErrorf("load: --csv-format %q: give %s or %s", csvFormat, csvFormatGpuletd, csvFormatPerfAnalyzer)
			case cmd.Flags().Changed("csv-format") && csvPath == "":
				return usageErrorf("load: --csv-format is the --csv file's: give --csv FILE (-f FILE) too")
			case csvFormat == csvFormatPerfAnalyzer && len(models) > 1:
				return usageErrorf("load: --csv-format %s holds one model's rows, as perf_analyzer measures one model, and %d are given", csvFormatPerfAnalyzer, len(models))
			}
			if streaming && grpcAddr == "" && !strings.EqualFold(protocol, "grpc") {
				return usageErrorf("load: --streaming sends over a gRPC stream: give --protocol grpc (the daemon's gRPC listener) or --grpc HOST:PORT too")
			}
			if shm && cudaShm {
				return errors.New("give --shm (system shared memory) or --cuda-shm (GPU memory), not both")
			}
			data, err := readInputDataFiles(inputDataFlag)
			if err != nil {
				return err
			}
			if err := data.check(len(models), inputs, binary, shm || cudaShm); err != nil {
				return err
			}
			if data.data != nil && data.data.Streams() > 0 && (cmd.Flags().Changed("sequence-length") || cmd.Flags().Changed("sequence-length-variation")) {
				return usageErrorf("load: the data file's streams are the sequences, each as long as its stream: give no --sequence-length or --sequence-length-variation with them")
			}
			d, err := g.daemonOf(cmd, url)
			if err != nil {
				return err
			}
			if err := d.addHeaders(headers); err != nil {
				return err
			}
			defer d.closeGRPC()
			if grpcAddr, err = grpcTarget(cmd.Context(), d, protocol, grpcAddr); err != nil {
				return err
			}
			sweeping := sw.rateRange != "" || sw.concurrencyRange != ""
			if err := sw.check(cmd, sweeping, rate, &arrivalSpec); err != nil {
				return err
			}
			if traces := tf.settings(cmd.Flags()); traces != nil {
				names := make([]string, len(models))
				for i, m := range models {
					names[i], _, _ = strings.Cut(m, "=")
				}
				if err := setTraces(cmd.Context(), cmd.ErrOrStderr(), d, grpcAddr, adminToken(g, ""), names, traces); err != nil {
					return err
				}
			}
			closed := arrivalSpec == arrivalClosed
			var table runTable
			if csvPath != "" {
				// Made before the run, so that a path it cannot write
				// fails before any request is sent.
				f, err := os.Create(csvPath)
				if err != nil {
					return fmt.Errorf("load: %w", err)
				}
				table = gpuletdTable{loadgen.NewCSVWriter(f)}
				if csvFormat == csvFormatPerfAnalyzer {
					table = newPerfAnalyzerTable(f, closed, mf.verboseCSV, mf.collect)
				}
				defer func() {
					cerr := f.Close()
					switch {
					case !table.Wrote():
						os.Remove(csvPath) // no run ended: no file to read
					case cerr != nil && err == nil:
						err = fmt.Errorf("load: %s: %w", csvPath, cerr)
					}
				}()
			}
			exportFile, err := openProfileExport(exportPath, len(models))
			if err != nil {
				return err
			}
			var experiments []exportExperiment
			if exportFile != nil {
				defer func() {
					if len(experiments) > 0 {
						if werr := writeProfileExport(exportFile, cmd.ErrOrStderr(), experiments); werr != nil && err == nil {
							err = werr
						}
					}
					if cerr := exportFile.Close(); cerr != nil && err == nil {
						err = fmt.Errorf("load: --profile-export-file: %w", cerr)
					}
					if len(experiments) == 0 {
						os.Remove(exportPath) // no run ended: no file to read
					}
				}()
			}
			if closed && !cmd.Flags().Changed("concurrency") {
				concurrency = 1 // perf_analyzer's concurrency mode starts at one
			}
			// configs makes the run's configs: a share per model, and the
			// requests in flight (a closed loop's, or the most).
			configs := func(shares []loadgen.Share, concurrency int) ([]loadgen.Config, error) {
				cfgs := make([]loadgen.Config, len(shares))
				for i, sh := range shares {
					s := seed + uint64(i) // each model its own arrivals and inputs
					var arr arrival.Arrivals
					if !closed {
						var err error
						if arr, err = loadgen.OpenArrivals(arrivalSpec, sh.Rate, s); err != nil {
							return nil, err
						}
					}
					cfgs[i] = loadgen.Config{
						URL: d.base, TLS: d.tls, Header: d.header, GRPC: grpcAddr, Model: sh.Model, ModelVersion: version, Rate: sh.Rate, Duration: duration, Warmup: warmup, Arrivals: arr, Closed: closed,
						Seed: s, Binary: binary, AutoBinary: !cmd.Flags().Changed("binary"), SharedMemory: shm, CUDASharedMemory: cudaShm, CUDARuntime: cudaRuntime(cudaShm), Concurrency: concurrency, Requests: requestCount, Drain: drain, Timeout: timeout,
						Inputs: inputs, Compression: compression, SLO: slo, Shapes: shapes, ZeroData: data.zero, Payload: data.payload, Data: data.data, StringLength: stringLength, StringData: stringData,
						Sequences: sequences, SequenceLength: sequenceLength, Priority: priority, Parameters: reqParams, BatchSize: batchSize, Streaming: streaming,
						Windows: windows, WarmupRequests: wf.warmupRequests, Export: exportFile != nil,
					}
					if err := sf.apply(cmd, &cfgs[i]); err != nil {
						return nil, err
					}
				}
				return cfgs, nil
			}
			if sw.rateRange != "" || sw.concurrencyRange != "" {
				if !cmd.Flags().Changed("warmup") {
					warmup = sweepWarmup
				}
				return sw.run(cmd, d, loadRun{models: models, grpc: grpcAddr, arrival: arrivalSpec, closed: closed, concurrency: concurrency, configs: configs, json: asJSON, csv: table, csvPath: csvPath,
					metrics: &mf, warmup: warmup, experiments: &experiments})
			}
			var shares []loadgen.Share
			if closed {
				shares, err = closedShares(models, rate)
			} else {
				shares, err = loadShares(models, rate, arrivalSpec)
			}
			if err != nil {
				return err
			}
			cfgs, err := configs(shares, concurrency)
			if err != nil {
				return err
			}
			var (
				rep *loadgen.Report
				mix *loadgen.MixReport
			)
			names := shareModels(shares)
			before := serverStatsOf(cmd.Context(), d, grpcAddr, names)
			collector := mf.start(cmd.Context(), d, warmup)
			var bounds *boundaryStats // one model's: the server's statistics at its windows' bounds
			if len(cfgs) == 1 {
				bounds = newBoundaryStats(cmd.Context(), d, grpcAddr, names)
				defer bounds.wait()
				cfgs[0].OnBoundary = bounds.at
				rep, err = loadgen.Run(cmd.Context(), cfgs[0])
			} else {
				mix, err = loadgen.RunMix(cmd.Context(), cfgs)
			}
			metrics := mf.stop(collector, cmd.ErrOrStderr())
			interrupted := errors.Is(err, context.Canceled)
			if err != nil && !interrupted {
				return d.failOver(grpcAddr, err)
			}
			if rep == nil && mix == nil {
				return &exitError{code: 1, msg: "gpuletd load: interrupted before any request was sent"}
			}
			all := mix
			if all == nil {
				all = &loadgen.MixReport{Models: []*loadgen.Report{rep}}
			}
			if exportFile != nil && rep != nil {
				experiments = append(experiments, experimentOf(rep))
			}
			var sides map[string]serverSide
			if bounds != nil && rep != nil {
				sides = bounds.sides(rep)
			}
			if sides == nil {
				sides = serverSides(before, serverStatsOf(context.WithoutCancel(cmd.Context()), d, grpcAddr, names))
			}
			if table != nil {
				if err := table.Run(all, serverView{sides: sides, metrics: metrics}); err != nil {
					return fmt.Errorf("load: %s: %w", csvPath, err)
				}
			}
			out := map[string]any{"arrival": arrivalSpec, "binary": binary, "compression": compression, "interrupted": interrupted}
			if len(sides) > 0 {
				out["server"] = sides
			}
			if hits := cacheHitsIn(sides); len(hits) > 0 {
				out["cache_hits"] = hits
			}
			if metrics != nil {
				out["server_metrics"] = metrics
			}
			var verdict *loadgen.SweepStep // the run judged against --min-attainment, when given
			if judged(cmd.Flags()) {
				v := loadgen.Judge(0, all, sw.rule())
				verdict = &v
				out["min_attainment"], out["holds"] = sw.minAttainment, v.Holds
				if sw.meanBound > 0 {
					out["max_mean_latency_ms"] = float64(sw.meanBound) / float64(time.Millisecond)
				}
			}
			switch {
			case asJSON && mix != nil:
				out["reports"], out["total"] = mix.Models, mix.Total
				err = printJSON(cmd.OutOrStdout(), out)
			case asJSON:
				out["report"] = rep
				err = printJSON(cmd.OutOrStdout(), out)
			case mix != nil:
				err = writeMixReport(cmd.OutOrStdout(), arrivalSpec, mix)
				writeServerSides(cmd.OutOrStdout(), sides, mix.Models, inputs)
				writeServerMetrics(cmd.OutOrStdout(), metrics, "")
			default:
				err = writeLoadReport(cmd.OutOrStdout(), arrivalSpec, rep)
				if err == nil && pa.verbose {
					err = writeTrials(cmd.OutOrStdout(), rep)
				}
				writeServerSides(cmd.OutOrStdout(), sides, []*loadgen.Report{rep}, inputs)
				writeServerMetrics(cmd.OutOrStdout(), metrics, "")
			}
			if err != nil {
				return err
			}
			if interrupted {
				return &exitError{code: 1, msg: "gpuletd load: interrupted; the report covers the requests sent until then"}
			}
			if verdict != nil && !verdict.Holds {
				return &exitError{code: 1, msg: shortOfFloor(*verdict, sw.rule())}
			}
			if rep != nil {
				return unstable(rep, duration)
			}
			return nil
		},
	}
	f := cmd.Flags()
	addURLFlag(f, &url)
	f.StringVarP(&version, "model-version", "x", "", "the version of the model to send to (/v2/models/MODEL/versions/V/infer, gRPC model_version), as perf_analyzer's -x; default the daemon's newest")
	registerProtocolFlag(cmd, &protocol)
	f.StringVar(&grpcAddr, "grpc", "", "send over gRPC to this host:port (the daemon's grpc_listen) instead of REST")
	f.StringArrayVarP(&headers, "header", "H", nil, headerUsage)
	registerPerfAnalyzerSSL(cmd)
	f.BoolVar(&streaming, "streaming", false, "over gRPC (--protocol grpc or --grpc): send every request over one ModelStreamInfer stream, as perf_analyzer's --streaming")
	f.StringSliceVarP(&models, "model", "m", nil, "model to send requests to: NAME, or several as NAME=RATE,NAME=RATE")
	f.Float64Var(&rate, "rate", 0, "mean request rate, requests/s (with several models: their total)")
	f.DurationVar(&duration, "duration", 10*time.Second, "how long to send requests (after the warm-up)")
	f.Int64Var(&requestCount, "request-count", 0, "end the run (each step of a sweep) once this many requests fell due after the warm-up, as perf_analyzer's --request-count; with no --duration it runs until then")
	f.DurationVar(&warmup, "warmup", 0, "send this long first, on the same schedule, without recording")
	f.StringVar(&arrivalSpec, "arrival", "poisson", "arrival process: poisson, constant, gamma:<shape>, gamma:cv=<c>, trace:<file>[@<scale>], intervals:<file>[@<scale>], or closed (a closed loop of --concurrency)")
	f.BoolVar(&binary, "binary", false, "send binary tensors and ask for binary outputs (unset: for inputs over 256 KiB as JSON; false: never)")
	f.DurationVar(&slo, "slo", 0, "latency objective the report counts answers within (default the daemon's, per model; needed against a server that gives none, such as Triton)")
	f.StringVar(&compression, "compression", "", "send requests compressed, gzip or deflate, and ask for compressed answers (as tritonclient's compression options)")
	f.BoolVar(&shm, "shm", false, "place inputs and outputs in a system shared-memory region (the daemon must run on this machine)")
	f.BoolVar(&cudaShm, "cuda-shm", false, "place inputs and outputs in GPU memory of this process's, registered as a CUDA shared-memory region (GPU 0; the daemon must run on this machine)")
	f.IntVarP(&batchSize, "batch-size", "b", 1, "rows in every request (its inputs' dimension 0), as perf_analyzer's -b: at most the model's max_batch_size")
	f.Uint64Var(&priority, "priority", 0, "send every request at this priority level of the model's (its priority_levels; 1 the highest); 0 sends none, the model's default")
	f.Var(&reqParams, "request-parameter", requestParamsUsage)
	f.IntVar(&concurrency, "concurrency", loadgen.DefaultConcurrency, "most requests in flight (a closed loop: always in flight, default 1)")
	f.IntVar(&inputs, "inputs", 1, "distinct requests per model, each with its own random inputs, sent in turn")
	f.IntVar(&sequences, "num-of-sequences", 0, "a stateful model's (sequence_batching) live sequences, each request sent in a free one (default --concurrency in a closed loop, else 4), as perf_analyzer's")
	f.IntVar(&sequenceLength, "sequence-length", loadgen.DefaultSequenceLength, "requests in each sequence of a stateful model, the first starting it and the last ending it, as perf_analyzer's")
	sf.register(cmd)
	tf.register(cmd)
	f.Var(&shapes, "shape", shapeUsage)
	f.StringArrayVar(&inputDataFlag, "input-data", []string{inputRandom}, inputDataUsage)
	f.IntVar(&stringLength, "string-length", 0, "the length of a generated BYTES element, random lowercase letters (default 16), as perf_analyzer's --string-length")
	f.StringVar(&stringData, "string-data", "", "every generated BYTES element, as perf_analyzer's --string-data (default: random words)")
	f.Uint64Var(&seed, "seed", 1, "seed of the arrivals and the inputs")
	f.DurationVar(&drain, "drain", loadgen.DefaultDrain, "how long to wait for answers after the last request")
	f.DurationVar(&timeout, "timeout", loadgen.DefaultTimeout, "longest wait for one answer")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.StringVarP(&csvPath, "csv", "f", "", "also write the report to this file as CSV: a row per model (and step of a sweep), as perf_analyzer's -f")
	f.StringVar(&csvFormat, "csv-format", csvFormatGpuletd, csvFormatUsage)
	f.StringVar(&exportPath, "profile-export-file", "", "also write every request counted, when it was sent and answered (ns since the epoch), to this file as perf_analyzer's profile export JSON: an experiment for the run or each step of a sweep")
	_ = cmd.RegisterFlagCompletionFunc("csv-format", cobra.FixedCompletions([]string{csvFormatGpuletd, csvFormatPerfAnalyzer}, cobra.ShellCompDirectiveNoFileComp))
	sw.register(f)
	pa.register(cmd)
	wf.register(cmd)
	mf.register(cmd)
	_ = cmd.RegisterFlagCompletionFunc("model", g.completeModelList)
	return cmd
}

// requestCountBound is the duration of a run given --request-count and no
// duration: the count ends it long before.
const requestCountBound = 24 * time.Hour

// arrivalClosed is the --arrival of a closed loop.
const arrivalClosed = "closed"

// noLoadNamed says the command line names no load: no rate (--rate or
// NAME=RATE), no arrival process and no range to sweep. gpuletd load then
// measures as perf_analyzer does given none: a closed loop, --concurrency
// requests (1 unless given) always in flight.
func noLoadNamed(f *pflag.FlagSet, models []string) bool {
	for _, name := range []string{"rate", "arrival", "request-distribution", "request-intervals", "rate-range", "concurrency-range"} {
		if f.Changed(name) {
			return false
		}
	}
	return !slices.ContainsFunc(models, func(m string) bool { return strings.Contains(m, "=") })
}

// closedShares reads --model for a closed loop: names without rates, and
// no --rate, since the loop's rate is what the server answers.
func closedShares(models []string, rate float64) ([]loadgen.Share, error) {
	if rate != 0 {
		return nil, fmt.Errorf("load: --arrival closed sends each request when the last is answered: give --concurrency, not --rate")
	}
	shares := make([]loadgen.Share, 0, len(models))
	for _, m := range models {
		if strings.Contains(m, "=") {
			return nil, fmt.Errorf("load: --arrival closed takes no rate per model (%s): give the model's name and --concurrency", m)
		}
		if slices.ContainsFunc(shares, func(s loadgen.Share) bool { return s.Model == m }) {
			return nil, fmt.Errorf("load: model %s is listed twice", m)
		}
		shares = append(shares, loadgen.Share{Model: m})
	}
	return shares, nil
}

// loadShares reads --model and --rate (loadgen.ParseShares). One model
// without a rate takes --rate as it is, even 0: a trace replayed at a scale
// of its own rate needs none. Several models cannot share such a trace:
// every model would get the whole trace's rate.
func loadShares(models []string, rate float64, arrivalSpec string) ([]loadgen.Share, error) {
	if len(models) == 1 && !strings.Contains(models[0], "=") {
		return []loadgen.Share{{Model: models[0], Rate: rate}}, nil
	}
	if s, err := arrival.Parse(arrivalSpec); err == nil && s.Kind == arrival.KindTrace && s.Scale > 0 && len(models) > 1 {
		if s.Intervals {
			return nil, fmt.Errorf("load: --arrival %s sends at the file's own gaps, which name one model's load; with several models give --rate or NAME=RATE and another arrival process", arrivalSpec)
		}
		return nil, fmt.Errorf("load: --arrival %s replays the trace at a scale of its own rate, which names one model's load; with several models give --rate or NAME=RATE and trace:%s", arrivalSpec, s.Path)
	}
	shares, err := loadgen.ParseShares(models, rate)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	return shares, nil
}

// shortOfFloor says why a run judged against --min-attainment, or
// perf_analyzer's --latency-threshold, did not hold.
func shortOfFloor(v loadgen.SweepStep, rule loadgen.StepRule) string {
	switch {
	case v.Lowest == "" && rule.MinAttainment > 0:
		return fmt.Sprintf("gpuletd load: no request fell due, so nothing held --min-attainment %s", percent(rule.MinAttainment))
	case v.Lowest == "":
		return "gpuletd load: no request fell due, so nothing held --latency-threshold " + dur(rule.MaxMeanLatency)
	case rule.MinAttainment > 0 && v.Attainment < rule.MinAttainment:
		return fmt.Sprintf("gpuletd load: %s answered %s of its requests due within its SLO, under --min-attainment %s", v.Lowest, percent(v.Attainment), percent(rule.MinAttainment))
	}
	return "gpuletd load: " + missedRule(&v, rule) + " (--latency-threshold, perf_analyzer's bound on the mean)"
}

// writeLoadReport prints a load run's report as a key-value table.
func writeLoadReport(w io.Writer, spec string, r *loadgen.Report) error {
	tensors, target := loadTarget(r)
	tw := newTable(w)
	model := r.Model
	if r.ModelVersion != "" {
		model += " version " + r.ModelVersion
	}
	fmt.Fprintf(tw, "target\t%s at %s\n", model, target)
	if r.Closed > 0 {
		fmt.Fprintf(tw, "arrivals\tclosed loop, %d in flight, for %s, %s tensors%s (%d-byte requests)\n",
			r.Closed, r.Window.Round(time.Millisecond), tensors, requestNotes(r), r.RequestBytes)
	} else {
		fmt.Fprintf(tw, "arrivals\t%s, %s for %s, %s tensors%s (%d-byte requests)\n",
			spec, perSecond(r.Rate), r.Window.Round(time.Millisecond), tensors, requestNotes(r), r.RequestBytes)
	}
	writeWindows(tw, r)
	if r.Sequences > 0 {
		fmt.Fprintf(tw, "sequences\t%d live, %d requests each%s\n", r.Sequences, r.SequenceLength, sequenceNotes(r))
	}
	if r.BatchSize > 1 {
		fmt.Fprintf(tw, "rows\t%d in every request\n", r.BatchSize)
	}
	fmt.Fprintf(tw, "requests\t%d scheduled, %d sent, %d dropped by this client, %d ok\n", r.Scheduled, r.Sent, r.Dropped, r.OK)
	fmt.Fprintf(tw, "failed\t%s\n", failures(r.Failed))
	if r.FirstError != "" {
		fmt.Fprintf(tw, "first error\t%s\n", clip(r.FirstError, 96))
	}
	goodput := perSecond(r.Goodput)
	if r.BatchSize > 1 {
		goodput += fmt.Sprintf(" (%s rows/s)", strings.TrimSuffix(perSecond(r.Goodput*float64(r.BatchSize)), "/s"))
	}
	fmt.Fprintf(tw, "slo %s\t%d within, attainment %s, goodput %s\n", dur(r.SLO), r.WithinSLO, percent(r.Attainment), goodput)
	if r.Latency.Count > 0 {
		fmt.Fprintf(tw, "latency\tp50 %s, p90 %s, p99 %s, max %s\n", dur(r.Latency.P50), dur(r.Latency.P90), dur(r.Latency.P99), dur(r.Latency.Max))
	} else {
		fmt.Fprintf(tw, "latency\tno answer\n")
	}
	if i, share := r.WorstSecond(); i >= 0 && share < 1 {
		s := r.Seconds[i]
		fmt.Fprintf(tw, "worst second\t%ds–%ds: %s within the SLO (%d due, %d failed, %d dropped)\n",
			i, i+1, percent(share), s.Due, s.Failed, s.Dropped)
	}
	if r.Closed > 0 {
		fmt.Fprintf(tw, "send rate\t%s, %d in flight at most\n", perSecond(r.SendRate), r.MaxInFlight)
		return tw.Flush()
	}
	fmt.Fprintf(tw, "send rate\t%s (target %s), %d in flight at most\n", perSecond(r.SendRate), perSecond(r.Rate), r.MaxInFlight)
	fmt.Fprintf(tw, "schedule lag\tp50 %s, p99 %s, max %s\n", dur(r.Lag.P50), dur(r.Lag.P99), dur(r.Lag.Max))
	if err := tw.Flush(); err != nil {
		return err
	}
	if why := lagWarning(r); why != "" {
		fmt.Fprintf(w, "warning: %s\n", why)
	}
	return nil
}

// minBurstLag is the schedule lag below which a load's requests are taken
// to have left as scheduled, whatever the SLO: a late send of 2 ms is a
// busy machine's scheduling, not a burst.
const minBurstLag = 2 * time.Millisecond

// lagWarning says when this client fell behind its own schedule: with its
// p99 lag above a quarter of the SLO (and minBurstLag), late requests left
// together as it caught up, so the server saw bursts the arrivals did not
// have (a surge, a queue, deferred batches missing their SLO) and the run
// measures the client's machine as much as the server. "" when it kept up.
func lagWarning(r *loadgen.Report) string {
	if r.Closed > 0 || r.Lag.Count == 0 || r.Lag.P99 <= max(minBurstLag, r.SLO/4) {
		return ""
	}
	return fmt.Sprintf("this client fell behind its schedule (1%% of its requests left %s or more late, up to %s): "+
		"it sent them in bursts as it caught up, which the server reads as surges; "+
		"give it a machine or cores of its own, or a lower --rate", dur(r.Lag.P99), dur(r.Lag.Max))
}

// failures writes the failure counts, "none" when there are none.
func failures(m map[string]int64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}

// dur writes a duration like millis does.
func dur(d time.Duration) string { return millis(float64(d) / float64(time.Millisecond)) }

// requestNotes says in which coding a load's requests went and at which
// priority level, if any.
func requestNotes(r *loadgen.Report) string {
	var s string
	if r.Compression != "" {
		s += ", " + r.Compression + "-compressed"
	}
	if r.Priority > 0 {
		s += fmt.Sprintf(", priority %d", r.Priority)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Parameters)) {
		s += fmt.Sprintf(", %s=%v", name, r.Parameters[name])
	}
	return s
}

// loadTarget names where a load went and how its tensors were sent.
func loadTarget(r *loadgen.Report) (tensors, target string) {
	tensors, target = loadTensors(r)
	if r.Streaming {
		target += ", one stream"
	}
	return tensors, target
}

// loadTensors names how a load's tensors went, and where.
func loadTensors(r *loadgen.Report) (tensors, target string) {
	switch {
	case r.CUDASharedMemory && r.GRPC != "":
		return "CUDA shared-memory", "grpc " + r.GRPC
	case r.CUDASharedMemory:
		return "CUDA shared-memory", r.URL
	case r.SharedMemory && r.GRPC != "":
		return "shared-memory", "grpc " + r.GRPC
	case r.SharedMemory:
		return "shared-memory", r.URL
	case r.GRPC != "":
		return "gRPC raw", "grpc " + r.GRPC
	case r.Binary:
		return "binary", r.URL
	}
	return "JSON", r.URL
}

// writeMixReport prints a mix's load: a row per model and their sum.
func writeMixReport(w io.Writer, spec string, m *loadgen.MixReport) error {
	first := m.Models[0]
	tensors, target := loadTarget(first)
	var binary []string // the models sent binary (over REST)
	for _, r := range m.Models {
		if t, _ := loadTarget(r); t == "binary" {
			binary = append(binary, r.Model)
		}
	}
	if len(binary) > 0 && len(binary) < len(m.Models) {
		tensors = "JSON tensors, binary for " + strings.Join(binary, ", ") + " (large as JSON)"
	} else {
		tensors += " tensors"
	}
	tensors += requestNotes(first)
	arrivals := spec + " arrivals"
	if first.Closed > 0 {
		arrivals = fmt.Sprintf("a closed loop of %d each", first.Closed)
	}
	fmt.Fprintf(w, "%d models at %s, %s for %s, %s\n\n",
		len(m.Models), target, arrivals, first.Window.Round(time.Millisecond), tensors)
	tw := newTable(w)
	fmt.Fprintf(tw, "MODEL\tRATE\tSENT\tOK\tSLO\tIN SLO\tGOODPUT\tP50\tP99\tFAILED\n")
	for _, r := range m.Models {
		p50, p99 := "-", "-"
		if r.Latency.Count > 0 {
			p50, p99 = dur(r.Latency.P50), dur(r.Latency.P99)
		}
		rate := r.Rate
		if r.Closed > 0 {
			rate = r.SendRate // a closed loop's rate is what was answered
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Model, perSecond(rate), r.Sent, r.OK, dur(r.SLO),
			percent(r.Attainment), perSecond(r.Goodput), p50, p99, failures(r.Failed))
	}
	t := m.Total
	rate := t.Rate
	if first.Closed > 0 {
		rate = t.SendRate
	}
	fmt.Fprintf(tw, "total\t%s\t%d\t%d\t\t%s\t%s\t\t\t%s\n", perSecond(rate), t.Sent, t.OK, percent(t.Attainment), perSecond(t.Goodput), failures(t.Failed))
	if err := tw.Flush(); err != nil {
		return err
	}
	if t.Dropped > 0 {
		fmt.Fprintf(w, "\n%d requests dropped by this client (--concurrency reached)\n", t.Dropped)
	}
	for _, r := range m.Models {
		if r.FirstError != "" {
			fmt.Fprintf(w, "first error of %s: %s\n", r.Model, clip(r.FirstError, 96))
		}
	}
	// One client sends every model's requests: it says once that it fell
	// behind, by the model whose requests it sent latest.
	latest := slices.MaxFunc(m.Models, func(a, b *loadgen.Report) int { return cmp.Compare(a.Lag.P99, b.Lag.P99) })
	if why := lagWarning(latest); why != "" {
		fmt.Fprintf(w, "warning: %s\n", why)
	}
	return nil
}

// cudaRuntime is the CUDA runtime library --cuda-shm allocates with: where
// the loader's path, cache or the system's folders have it; "" leaves it to
// the loader (which then says it is missing).
func cudaRuntime(wanted bool) string {
	if !wanted {
		return ""
	}
	return cudalibs.Path(cudart.Library, cudalibs.Search{LDLibraryPath: os.Getenv("LD_LIBRARY_PATH")})
}
