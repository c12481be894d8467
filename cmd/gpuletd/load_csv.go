package main

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/gpulet/gpuletd/sim/loadgen"
)

// --csv-format's values.
const (
	csvFormatGpuletd      = "gpuletd"
	csvFormatPerfAnalyzer = "perf_analyzer"
)

// csvFormatUsage is --csv-format's usage.
const csvFormatUsage = "the --csv file's columns: gpuletd (every model's counts, attainment, goodput and latencies) or perf_analyzer (one model's rows in perf_analyzer's -f columns, for the scripts and spreadsheets that read them)"

// runTable is where gpuletd load writes its runs for --csv: a single run,
// or a sweep's steps as each ends, with what the server said of it.
type runTable interface {
	Run(mix *loadgen.MixReport, view serverView) error
	Step(st loadgen.SweepStep, view serverView) error
	// Wrote says something was written.
	Wrote() bool
	// ServerSides says Run and Step use the server's statistics, so a
	// sweep reads them around every step.
	ServerSides() bool
}

// gpuletdTable is --csv-format gpuletd.
type gpuletdTable struct{ *loadgen.CSVWriter }

func (t gpuletdTable) Run(mix *loadgen.MixReport, _ serverView) error {
	return t.CSVWriter.Run(mix)
}

func (t gpuletdTable) Step(st loadgen.SweepStep, _ serverView) error {
	return t.CSVWriter.Step(st)
}

func (gpuletdTable) ServerSides() bool { return false }

// perfAnalyzerColumns are perf_analyzer's -f columns after the first
// (Concurrency, or Request Rate), with its default percentiles; times in
// microseconds.
var perfAnalyzerColumns = []string{"Inferences/Second", "Client Send", "Network+Server Send/Recv",
	"Server Queue", "Server Compute Input", "Server Compute Infer", "Server Compute Output", "Client Recv",
	"p50 latency", "p90 latency", "p95 latency", "p99 latency"}

// perfAnalyzerVerbose are the columns perf_analyzer's --verbose-csv adds,
// and perfAnalyzerGPUs those it adds with --collect-metrics: each a
// GPU:value; pair for every GPU.
var (
	perfAnalyzerVerbose = []string{"Avg latency", "request/response", "response wait"}
	perfAnalyzerGPUs    = []string{"Avg GPU Utilization", "Avg GPU Power Usage", "Max GPU Memory Usage", "Total GPU Memory"}
)

// perfAnalyzerTable is --csv-format perf_analyzer: a row per run or step
// of one model, sorted by throughput as perf_analyzer sorts them, the file
// written again whole at every step so that an interrupted sweep leaves
// the steps that ended. Client Send and Client Recv are 0: the requests
// are made before the run, and the time to read an answer is in the
// latency; Network+Server Send/Recv is the mean latency less the server's
// queue and compute, as perf_analyzer reckons it. With verbose
// (--verbose-csv) the mean latency follows, request/response 0 for the
// same reason, and response wait the mean latency; with gpus
// (--collect-metrics) too, each GPU's metrics.
type perfAnalyzerTable struct {
	f             rewritable
	closed        bool // a closed loop: the first column is Concurrency
	verbose, gpus bool
	rows          []perfAnalyzerRow
}

// rewritable is a file written again from its start (an *os.File).
type rewritable interface {
	io.WriteSeeker
	Truncate(size int64) error
}

type perfAnalyzerRow struct {
	throughput float64
	cells      []string
}

// newPerfAnalyzerTable writes to f.
func newPerfAnalyzerTable(f rewritable, closed, verbose, gpus bool) *perfAnalyzerTable {
	return &perfAnalyzerTable{f: f, closed: closed, verbose: verbose, gpus: verbose && gpus}
}

func (t *perfAnalyzerTable) Wrote() bool       { return len(t.rows) > 0 }
func (t *perfAnalyzerTable) ServerSides() bool { return true }

func (t *perfAnalyzerTable) Run(mix *loadgen.MixReport, view serverView) error {
	if len(mix.Models) != 1 {
		return fmt.Errorf("write csv: perf_analyzer's columns hold one model, and the run has %d", len(mix.Models))
	}
	r := mix.Models[0]
	at := r.Rate
	if r.Closed > 0 {
		at = float64(r.Closed)
	}
	return t.add(at, r, view)
}

func (t *perfAnalyzerTable) Step(st loadgen.SweepStep, view serverView) error {
	if len(st.Run.Models) != 1 {
		return fmt.Errorf("write csv: perf_analyzer's columns hold one model, and the run has %d", len(st.Run.Models))
	}
	return t.add(st.At, st.Run.Models[0], view)
}

func (t *perfAnalyzerTable) add(at float64, r *loadgen.Report, view serverView) error {
	us := func(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }
	var throughput float64
	if r.Window > 0 {
		throughput = float64(r.OK*int64(max(r.BatchSize, 1))) / r.Window.Seconds()
	}
	first := strconv.FormatFloat(at, 'g', -1, 64)
	if t.closed {
		first = strconv.Itoa(int(at))
	}
	side := view.sides[r.Model]
	server := time.Duration(side.QueueNS + side.InputNS + side.InferNS + side.OutputNS)
	l := r.Latency
	cells := []string{first, strconv.FormatFloat(throughput, 'f', 1, 64), "0", us(max(l.Mean-server, 0)),
		us(time.Duration(side.QueueNS)), us(time.Duration(side.InputNS)), us(time.Duration(side.InferNS)), us(time.Duration(side.OutputNS)), "0",
		us(l.P50), us(l.P90), us(l.P95), us(l.P99)}
	if t.verbose {
		cells = append(cells, us(l.Mean), "0", us(l.Mean))
	}
	if t.gpus {
		cells = append(cells, gpuCells(view.metrics)...)
	}
	t.rows = append(t.rows, perfAnalyzerRow{throughput: throughput, cells: cells})
	slices.SortStableFunc(t.rows, func(a, b perfAnalyzerRow) int { return cmp.Compare(a.throughput, b.throughput) })
	return t.rewrite()
}

// rewrite writes the header and every row, over what the file held.
func (t *perfAnalyzerTable) rewrite() error {
	if err := t.f.Truncate(0); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	if _, err := t.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	c := csv.NewWriter(t.f)
	head := "Request Rate"
	if t.closed {
		head = "Concurrency"
	}
	header := append([]string{head}, perfAnalyzerColumns...)
	if t.verbose {
		header = append(header, perfAnalyzerVerbose...)
	}
	if t.gpus {
		header = append(header, perfAnalyzerGPUs...)
	}
	_ = c.Write(header)
	for _, r := range t.rows {
		_ = c.Write(r.cells)
	}
	c.Flush()
	if err := c.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// gpuCells are the perfAnalyzerGPUs columns of a run whose metrics are s
// (nil: none read, every cell empty): GPU:value; for each GPU that gave
// the figure, utilization as a fraction, power in watts, memory in bytes.
func gpuCells(s *loadgen.MetricsSummary) []string {
	cells := make([]string, len(perfAnalyzerGPUs))
	if s == nil {
		return cells
	}
	for _, g := range s.GPUs {
		for i, v := range []float64{g.Utilization, g.PowerWatts, g.MaxMemoryUsedBytes, g.MemoryTotalBytes} {
			if v >= 0 {
				cells[i] += g.GPU + ":" + strconv.FormatFloat(v, 'f', -1, 64) + ";"
			}
		}
	}
	return cells
}
