package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The traced tensors print trace by trace, a pipeline's step requests
// under it in the order they were sent, each tensor with its first values.
func TestWriteTraceTensors(t *testing.T) {
	var recs []traceRecord
	require.NoError(t, json.Unmarshal([]byte(`[
 {"id": 1, "model_name": "pipe", "model_version": 1, "timestamps": [{"name": "REQUEST_START", "ns": 0}, {"name": "REQUEST_END", "ns": 9}]},
 {"id": 1, "activity": "TENSOR_QUEUE_INPUT", "tensor": {"name": "image", "data": "0,0.2,0.4,0.6,0.8,0,0.2,0.4,0.6,0.8", "shape": "1,10", "dtype": "FP32"}},
 {"id": 1, "activity": "TENSOR_BACKEND_OUTPUT", "tensor": {"name": "labels", "data": "3,1", "shape": "1,2", "dtype": "INT64"}},
 {"id": 3, "parent_id": 1, "model_name": "cls", "model_version": 1},
 {"id": 2, "parent_id": 1, "model_name": "det", "model_version": 2, "error": "deadline"},
 {"id": 2, "activity": "TENSOR_QUEUE_INPUT", "tensor": {"name": "x", "data": "", "shape": "1,0", "dtype": "FP32"}},
 {"id": 7, "parent_id": 5, "model_name": "cls", "model_version": 1},
 {"id": 7, "activity": "TENSOR_BACKEND_OUTPUT", "tensor": {"name": "y", "data": "1", "shape": "1", "dtype": "FP32"}}
]`), &recs))
	var b strings.Builder
	require.NoError(t, writeTraceTensors(&b, recs))
	require.Equal(t, `trace 1: pipe (version 1)
  in  image FP32 [1,10]: 0,0.2,0.4,0.6,0.8,0,0.2,0.4, … (10 values)
  out labels INT64 [1,2]: 3,1
  trace 2: det (version 2), failed: deadline
    in  x FP32 [1,0]: (no values)
  trace 3: cls (version 1)
trace 7: cls (version 1)
  out y FP32 [1]: 1
`, b.String())

	require.ErrorContains(t, writeTraceTensors(&b, recs[:1]), "no tensors (trace_level TENSORS)")
}
