package loadgen

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// csvColumns are the columns CSVWriter writes, in order: a spreadsheet's
// or a plotting script's view of a run, as perf_analyzer's -f file is.
var csvColumns = []string{
	"step", "holds", "model", "target_rate", "closed_loop", "slo_ms",
	"scheduled", "sent", "dropped_by_client", "ok", "failed", "within_slo",
	"slo_attainment", "goodput", "send_rate",
	"p50_us", "p90_us", "p95_us", "p99_us", "max_us", "mean_us", "failures",
	"batch_size",
}

// CSVWriter writes runs as comma-separated rows under one header line: a
// row per model, and a row "total" for a mix of several. Each write is
// flushed, so that a sweep's file holds every step that ended even when
// the sweep is interrupted.
type CSVWriter struct {
	w      *csv.Writer
	header bool
}

// NewCSVWriter writes to w.
func NewCSVWriter(w io.Writer) *CSVWriter {
	return &CSVWriter{w: csv.NewWriter(w)}
}

// Wrote says that a row, or the header, has been written.
func (c *CSVWriter) Wrote() bool { return c.header }

// Run writes a run that is not a sweep's step: step and holds are empty.
func (c *CSVWriter) Run(mix *MixReport) error {
	return c.rows("", "", mix)
}

// Step writes a sweep's step: its total rate or concurrency, and whether
// it held (yes or no).
func (c *CSVWriter) Step(st SweepStep) error {
	holds := "no"
	if st.Holds {
		holds = "yes"
	}
	return c.rows(strconv.FormatFloat(st.At, 'f', -1, 64), holds, st.Run)
}

func (c *CSVWriter) rows(step, holds string, mix *MixReport) error {
	if !c.header {
		if err := c.w.Write(csvColumns); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
		c.header = true
	}
	// Rates and shares to four decimals, durations to the nanosecond.
	num := func(v float64) string { return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64) }
	count := func(v int64) string { return strconv.FormatInt(v, 10) }
	us := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', -1, 64)
	}
	for _, r := range mix.Models {
		closed := ""
		if r.Closed > 0 {
			closed = strconv.Itoa(r.Closed)
		}
		row := []string{step, holds, r.Model, num(r.Rate), closed, num(float64(r.SLO) / float64(time.Millisecond)),
			count(r.Scheduled), count(r.Sent), count(r.Dropped), count(r.OK), count(failedCount(r.Failed)), count(r.WithinSLO),
			num(r.Attainment), num(r.Goodput), num(r.SendRate)}
		if l := r.Latency; l.Count > 0 {
			row = append(row, us(l.P50), us(l.P90), us(l.P95), us(l.P99), us(l.Max), us(l.Mean))
		} else {
			row = append(row, "", "", "", "", "", "")
		}
		if err := c.w.Write(append(row, failureList(r.Failed), strconv.Itoa(max(r.BatchSize, 1)))); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	if len(mix.Models) > 1 {
		t := mix.Total
		// A mix's latencies are per model; the total has none.
		row := []string{step, holds, "total", num(t.Rate), "", "",
			count(t.Scheduled), count(t.Sent), count(t.Dropped), count(t.OK), count(failedCount(t.Failed)), count(t.WithinSLO),
			num(t.Attainment), num(t.Goodput), num(t.SendRate), "", "", "", "", "", "", failureList(t.Failed), ""}
		if err := c.w.Write(row); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

func failedCount(failed map[string]int64) int64 {
	var n int64
	for _, v := range failed {
		n += v
	}
	return n
}

// failureList is the failures by kind, "503 dropped=12; 503 deadline=3",
// in the order of their names.
func failureList(failed map[string]int64) string {
	parts := make([]string, 0, len(failed))
	for _, k := range slices.Sorted(maps.Keys(failed)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, failed[k]))
	}
	return strings.Join(parts, "; ")
}
