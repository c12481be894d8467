package daemon

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// At level TENSORS a trace is followed in its file by an entry per tensor
// the request brought and was answered with, as Triton writes them
// (activity, and the tensor's name, values, shape and data type as text);
// without TIMESTAMPS the trace has no timestamps.
func TestTensorsAreTraced(t *testing.T) {
	in, err := tensor.FromFloat32s("x", []int64{1, 3}, []float32{0.5, -1, 2})
	require.NoError(t, err)
	out, err := tensor.FromFloat32s("y", []int64{1, 2}, []float32{0.25, 4})
	require.NoError(t, err)
	for _, tc := range []struct {
		levels     []string
		timestamps bool
	}{
		{[]string{traceTimestamps, traceTensors}, true},
		{[]string{traceTensors}, false},
	} {
		dir := t.TempDir()
		tr := newTestTracer(t, dir)
		got, err := tr.update("", map[string][]string{traceLevel: tc.levels, traceRate: {"1"}, traceFile: {"t.json"}})
		require.NoError(t, err)
		require.Equal(t, tc.levels, got[traceLevel])
		rt := tr.sample("m", "m", 1, time.Now(), nil)
		rt.tensors(activityQueueInput, []tensor.Tensor{in})
		rt.tensors(activityBackendOutput, []tensor.Tensor{out})
		tr.done(rt, time.Now(), "")
		tr.close()

		tr.writers.Wait()
		data, err := os.ReadFile(filepath.Join(dir, "t.json"))
		require.NoError(t, err)
		var file []map[string]any
		require.NoError(t, json.Unmarshal(data, &file))
		require.Len(t, file, 3, string(data))
		id := file[0]["id"]
		require.Equal(t, "m", file[0]["model_name"])
		_, has := file[0]["timestamps"]
		require.Equal(t, tc.timestamps, has, string(data))
		require.Equal(t, map[string]any{"id": id, "activity": "TENSOR_QUEUE_INPUT",
			"tensor": map[string]any{"name": "x", "data": "0.5,-1,2", "shape": "1,3", "dtype": "FP32"}}, file[1])
		require.Equal(t, map[string]any{"id": id, "activity": "TENSOR_BACKEND_OUTPUT",
			"tensor": map[string]any{"name": "y", "data": "0.25,4", "shape": "1,2", "dtype": "FP32"}}, file[2])
	}
}

// Traced tensors count in what a stream may hold unwritten: beyond the
// bytes allowed, traces are dropped and the log says so. A request traced
// at TIMESTAMPS alone books no tensors.
func TestTracedTensorsAreBounded(t *testing.T) {
	dir := t.TempDir()
	var said traceErrors
	tr := newTracer(dir, said.add)
	tr.maxBufferedBytes = 20
	_, err := tr.update("", map[string][]string{traceLevel: {traceTensors}, traceRate: {"1"}, traceFile: {"b.json"}})
	require.NoError(t, err)
	in, err := tensor.FromFloat32s("x", []int64{1, 3}, []float32{0.5, -1, 2}) // "0.5,-1,2": 8 bytes
	require.NoError(t, err)
	for range 3 {
		rt := tr.sample("m", "m", 1, time.Now(), nil)
		rt.tensors(activityQueueInput, []tensor.Tensor{in})
		tr.done(rt, time.Now(), "")
	}
	require.Equal(t, []string{"drop traces of the global settings: 2 are held, not yet written, with 24 bytes of tensors (log_frequency 0); set a log_frequency below that"}, said.all())
	tr.close()
	require.Len(t, readTraces(t, tr, filepath.Join(dir, "b.json")), 4, "two traces, a tensor each")

	plain := newTestTracer(t, t.TempDir())
	_, err = plain.update("", map[string][]string{traceLevel: {traceTimestamps}, traceRate: {"1"}})
	require.NoError(t, err)
	rt := plain.sample("m", "m", 1, time.Now(), nil)
	rt.tensors(activityQueueInput, []tensor.Tensor{in})
	require.Empty(t, rt.entry.tensors)
	require.Zero(t, rt.entry.tensorBytes())
}
