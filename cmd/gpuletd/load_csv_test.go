package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/sim/loadgen"
)

// TestPerfAnalyzerTable: perf_analyzer's -f columns, a row per step sorted
// by throughput and the file whole after every step; the server's
// statistics fill the server's columns and the rest of the mean latency
// is the network's.
func TestPerfAnalyzerTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perf.csv")
	f, err := os.Create(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	report := func(ok int64, batch int, mean time.Duration) *loadgen.MixReport {
		return &loadgen.MixReport{Models: []*loadgen.Report{{Model: "m", OK: ok, BatchSize: batch, Window: 2 * time.Second,
			Latency: loadgen.Percentiles{Count: ok, P50: 900 * time.Microsecond, P90: 1500 * time.Microsecond, P95: 2 * time.Millisecond, P99: 3500 * time.Microsecond, Mean: mean}}}}
	}
	read := func() [][]string {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		require.NoError(t, err)
		return rows
	}
	table := newPerfAnalyzerTable(f, true, false, false)
	require.False(t, table.Wrote())
	sides := map[string]serverSide{"m": {QueueNS: 100_000, InputNS: 20_000, InferNS: 500_000, OutputNS: 10_000}}
	require.NoError(t, table.Step(loadgen.SweepStep{At: 2, Run: report(400, 1, time.Millisecond)}, serverView{sides: sides}))
	require.True(t, table.Wrote())
	require.Equal(t, [][]string{
		{"Concurrency", "Inferences/Second", "Client Send", "Network+Server Send/Recv", "Server Queue", "Server Compute Input", "Server Compute Infer", "Server Compute Output", "Client Recv", "p50 latency", "p90 latency", "p95 latency", "p99 latency"},
		{"2", "200.0", "0", "370", "100", "20", "500", "10", "0", "900", "1500", "2000", "3500"},
	}, read())
	// A step that answered less comes first; rows of four each count four
	// inferences; no statistics read: the server's columns are 0.
	require.NoError(t, table.Step(loadgen.SweepStep{At: 1, Run: report(50, 4, 800*time.Microsecond)}, serverView{}))
	rows := read()
	require.Len(t, rows, 3)
	require.Equal(t, []string{"1", "100.0", "0", "800", "0", "0", "0", "0", "0"}, rows[1][:9])
	require.Equal(t, "2", rows[2][0])

	two := report(1, 1, 0)
	two.Models = append(two.Models, two.Models[0])
	require.ErrorContains(t, table.Run(two, serverView{}), "perf_analyzer's columns hold one model, and the run has 2")

	// --verbose-csv with --collect-metrics: the mean latency, and each
	// GPU's metrics as GPU:value; pairs (a figure a GPU did not give left
	// out of its column); a run whose metrics were not read, empty cells.
	verbose := filepath.Join(t.TempDir(), "verbose.csv")
	vf, err := os.Create(verbose)
	require.NoError(t, err)
	t.Cleanup(func() { _ = vf.Close() })
	table = newPerfAnalyzerTable(vf, false, true, true)
	metrics := &loadgen.MetricsSummary{GPUs: []loadgen.GPUMetrics{
		{GPU: "GPU-a", Utilization: 0.375, PowerWatts: 250.5, MaxMemoryUsedBytes: 12e9, MemoryTotalBytes: 80e9},
		{GPU: "GPU-b", Utilization: 0.5, PowerWatts: -1, MaxMemoryUsedBytes: -1, MemoryTotalBytes: 80e9},
	}}
	require.NoError(t, table.Run(report(400, 1, time.Millisecond), serverView{sides: sides, metrics: metrics}))
	require.NoError(t, table.Run(report(100, 1, time.Millisecond), serverView{}))
	b, err := os.ReadFile(verbose)
	require.NoError(t, err)
	rows, err = csv.NewReader(bytes.NewReader(b)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"Avg latency", "request/response", "response wait", "Avg GPU Utilization", "Avg GPU Power Usage", "Max GPU Memory Usage", "Total GPU Memory"}, rows[0][13:])
	require.Equal(t, []string{"1000", "0", "1000", "", "", "", ""}, rows[1][13:])
	require.Equal(t, []string{"1000", "0", "1000", "GPU-a:0.375;GPU-b:0.5;", "GPU-a:250.5;", "GPU-a:12000000000;", "GPU-a:80000000000;GPU-b:80000000000;"}, rows[2][13:])
}
