package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTraceChanges(t *testing.T) {
	got, err := traceChanges([]string{"trace_level=TIMESTAMPS", "trace_rate=100", "trace_file="})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"trace_level": []string{"TIMESTAMPS"}, "trace_rate": "100", "trace_file": nil}, got)
	for _, bad := range []string{"trace_level", "=1"} {
		_, err := traceChanges([]string{bad})
		require.ErrorContains(t, err, "give NAME=VALUE", bad)
	}
}

func TestWriteTraceSummary(t *testing.T) {
	var recs []traceRecord
	// Three answered lenet5 requests (1, 2 and 3 ms end to end, each
	// 100 µs queued and 300 µs in its batch) and one failed; one pipeline
	// request with its start and end only; a traced tensor and a trace
	// at level TENSORS alone, which have no times to summarize.
	require.NoError(t, json.Unmarshal([]byte(`[
 {"model_name": "lenet5", "timestamps": [{"name": "REQUEST_START", "ns": 0}, {"name": "QUEUE_START", "ns": 200000},
   {"name": "COMPUTE_START", "ns": 300000}, {"name": "COMPUTE_END", "ns": 600000}, {"name": "REQUEST_END", "ns": 1000000}]},
 {"model_name": "lenet5", "timestamps": [{"name": "REQUEST_START", "ns": 0}, {"name": "QUEUE_START", "ns": 200000},
   {"name": "COMPUTE_START", "ns": 300000}, {"name": "COMPUTE_END", "ns": 600000}, {"name": "REQUEST_END", "ns": 2000000}]},
 {"model_name": "lenet5", "timestamps": [{"name": "REQUEST_START", "ns": 0}, {"name": "QUEUE_START", "ns": 200000},
   {"name": "COMPUTE_START", "ns": 300000}, {"name": "COMPUTE_END", "ns": 600000}, {"name": "REQUEST_END", "ns": 3000000}]},
 {"model_name": "lenet5", "error": "deadline", "timestamps": [{"name": "REQUEST_START", "ns": 0}, {"name": "REQUEST_END", "ns": 9000000}]},
 {"model_name": "pipe", "timestamps": [{"name": "REQUEST_START", "ns": 0}, {"name": "REQUEST_END", "ns": 5000000}]},
 {"id": 5, "activity": "TENSOR_QUEUE_INPUT", "tensor": {"name": "x", "data": "1,2", "shape": "1,2", "dtype": "FP32"}},
 {"id": 6, "model_name": "tensors-only"}
]`), &recs))
	var b strings.Builder
	require.NoError(t, writeTraceSummary(&b, recs))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 3)
	require.Equal(t, []string{"lenet5", "4", "1", "2ms", "/", "3ms", "100µs", "/", "100µs", "300µs", "/", "300µs", "1.6ms", "/", "2.6ms"}, strings.Fields(lines[1]))
	require.Equal(t, []string{"pipe", "1", "0", "5ms", "/", "5ms", "-", "-", "-"}, strings.Fields(lines[2]))
	require.Error(t, writeTraceSummary(&b, nil))
}

// Without FILE, trace summary reads the configured state_dir's traces
// folder; a folder or a file the daemon has not written yet is an error
// that says when it writes them.
func TestTraceSummaryReadsTheStateDirsTraces(t *testing.T) {
	state := t.TempDir()
	t.Setenv("GPULETD_CONFIG", "")
	t.Setenv("GPULETD_STATE_DIR", state)
	code, _, stderr := runCLI(t, "trace", "summary")
	require.Equal(t, 1, code)
	require.Equal(t, "gpuletd: trace summary: no trace file in "+filepath.Join(state, "traces")+" yet"+traceWriteHint+"\n", stderr)
	missing := filepath.Join(state, "traces", "trace.json")
	code, _, stderr = runCLI(t, "trace", "summary", missing)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "gpuletd: trace summary: "+missing+" does not exist (yet): the daemon writes the traces it holds")

	trace := `[{"model_name": "m", "timestamps": [{"name": "REQUEST_START", "ns": 0}, {"name": "REQUEST_END", "ns": 2000000}]}]`
	require.NoError(t, os.MkdirAll(filepath.Join(state, "traces"), 0o750))
	for _, name := range []string{"trace.json.0", "trace.json.1", ".trace.json.2.tmp-1"} {
		require.NoError(t, os.WriteFile(filepath.Join(state, "traces", name), []byte(trace), 0o640))
	}
	code, out, stderr := runCLI(t, "trace", "summary")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, []string{"m", "2", "0", "2ms", "/", "2ms", "-", "-", "-"}, strings.Fields(strings.Split(out, "\n")[1]),
		"both files, not the one being written")
}
