package loadgen

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/kserve"
)

// dataModel batches (max_batch_size 8) an FP32 input of 2x2 and a
// dynamic INT64 one.
func dataModel() *Model {
	return &Model{MaxBatchSize: 8, Metadata: kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{
		{Name: "x", DataType: "FP32", Shape: []int64{-1, 2, 2}},
		{Name: "ids", DataType: "INT64", Shape: []int64{-1, -1}},
	}}}
}

// TestInputDataBuildsRequests: perf_analyzer's data file makes a request
// an entry, each input's values flattened into the model's shape or the
// one given, base64 bytes as a binary tensor, one row's values repeated
// for a batch of several.
func TestInputDataBuildsRequests(t *testing.T) {
	f32 := make([]byte, 16)
	for i := range 4 {
		binary.LittleEndian.PutUint32(f32[4*i:], math.Float32bits(float32(i)))
	}
	file := `{"data": [
		{"x": [[1, 2], [3, 4]], "ids": {"content": [9007199254740993, 2, 3], "shape": [3]}},
		{"x": {"b64": "` + base64.StdEncoding.EncodeToString(f32) + `"}, "ids": [7]}
	]}`
	require.True(t, IsInputData([]byte(file)))
	require.False(t, IsInputData([]byte(`{"inputs": [{"name": "x"}]}`)))
	d, err := ParseInputData([]byte(file))
	require.NoError(t, err)
	require.Equal(t, 2, d.Len())
	ps, err := d.payloads(dataModel())
	require.NoError(t, err)
	require.Len(t, ps, 2)

	var first kserve.InferRequestJSON
	require.Equal(t, int64(-1), ps[0].JSONLen, "values alone: a JSON body")
	require.NoError(t, json.Unmarshal(ps[0].Body, &first))
	require.Equal(t, []int64{1, 2, 2}, first.Inputs[0].Shape)
	require.JSONEq(t, `[1,2,3,4]`, string(first.Inputs[0].Data))
	require.Equal(t, []int64{1, 3}, first.Inputs[1].Shape, "the entry's shape, the batch before it")
	require.Equal(t, `[9007199254740993,2,3]`, string(first.Inputs[1].Data), "integers past 2^53 as written")
	_, err = kserve.DecodeRequest(ps[0].Body, -1)
	require.NoError(t, err, "a request the daemon decodes")

	require.Equal(t, int64(len(ps[1].Body)-16), ps[1].JSONLen, "b64: its bytes after the JSON")
	_, err = kserve.DecodeRequest(ps[1].Body, ps[1].JSONLen)
	require.NoError(t, err)

	// Four rows a request: one row's values go in each.
	m := dataModel()
	m.Rows = 4
	ps, err = d.payloads(m)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(ps[0].Body, &first))
	require.Equal(t, []int64{4, 2, 2}, first.Inputs[0].Shape)
	require.JSONEq(t, `[1,2,3,4,1,2,3,4,1,2,3,4,1,2,3,4]`, string(first.Inputs[0].Data))
	require.Equal(t, int64(len(ps[1].Body)-64), ps[1].JSONLen)
}

func TestInputDataRejects(t *testing.T) {
	for _, tc := range []struct{ name, file, says string }{
		{"no data", `{"data": []}`, `"data" holds no request`},
		{"validation", `{"data": [{"x": [1]}], "validation_data": [{"y": [1]}]}`, "validation_data is not checked"},
		{"requests and streams", `{"data": [{"x": [1]}, [{"x": [1]}]]}`, `entry 2: "data" holds requests or streams of them`},
		{"streams and requests", `{"data": [[{"x": [1]}], {"x": [1]}]}`, `entry 2: "data" holds requests or streams of them`},
		{"an empty stream", `{"data": [[]]}`, "stream 1 is not a list of requests"},
		{"a stream of numbers", `{"data": [[3]]}`, "stream 1, request 1 is not an object of inputs"},
		{"not inputs", `{"data": [3]}`, "entry 1 is not an object of inputs"},
		{"not JSON", `{"data": [`, "read input data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseInputData([]byte(tc.file))
			require.ErrorIs(t, err, ErrConfig)
			require.ErrorContains(t, err, tc.says)
		})
	}
	for _, tc := range []struct{ name, entry, says string }{
		{"an input left out", `{"x": [1, 2, 3, 4]}`, `entry 1: no values for input "ids"`},
		{"an unknown input", `{"x": [1, 2, 3, 4], "ids": [1], "y": [1]}`, `entry 1: "y" is not an input of the model`},
		{"too few values", `{"x": [1, 2, 3], "ids": [1]}`, `input "x": 3 values; shape [1 2 2] holds 4`},
		{"b64 of another size", `{"x": {"b64": "AAAA"}, "ids": [1]}`, `input "x": b64 holds 3 bytes; shape [1 2 2] of FP32 takes 16`},
		{"bad b64", `{"x": {"b64": "%%"}, "ids": [1]}`, `input "x": b64: illegal base64`},
		{"no values", `{"x": {"shape": [2, 2]}, "ids": [1]}`, `input "x": give its values`},
		{"text for numbers", `{"x": ["a", "b", "c", "d"], "ids": [1]}`, `entry 1: bad request: input "x": data value 0: "\"a\"" is not a number`},
		{"a fraction for an integer", `{"x": [1, 2, 3, 4], "ids": [1.5]}`, `input "ids": data value 0: "1.5" is not an integer that fits INT64`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseInputData([]byte(`{"data": [` + tc.entry + `]}`))
			require.NoError(t, err)
			_, err = d.payloads(dataModel())
			require.ErrorIs(t, err, ErrPayload)
			require.ErrorContains(t, err, tc.says)
		})
	}
}

func FuzzInputData(f *testing.F) {
	for _, s := range []string{
		`{"data": [{"x": [[1, 2], [3, 4]], "ids": {"content": [1, 2], "shape": [2]}}]}`,
		`{"data": [{"x": {"b64": "AAAAAAAAAAAAAAAAAAAAAA=="}, "ids": [1]}]}`,
		`{"data": [[{"x": [1]}]]}`, `{"data": [{"x": {"shape": [-1]}, "ids": []}]}`, `{"data": 3}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		d, err := ParseInputData([]byte(in))
		if err != nil {
			require.ErrorIs(t, err, ErrConfig)
			return
		}
		m := dataModel()
		ps, err := d.payloads(m)
		if err != nil {
			require.ErrorIs(t, err, ErrPayload)
			return
		}
		for _, p := range ps {
			_, err := kserve.DecodeRequest(p.Body, p.JSONLen)
			require.NoError(t, err, "every request built decodes: %s", p.Body)
		}
	})
}
