package loadgen

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve"
)

// dirModel batches (max_batch_size 8) an FP32 input of 2x2 and a BYTES
// input of 3 elements, and answers an output y.
func dirModel() *Model {
	return &Model{MaxBatchSize: 8, Metadata: kserve.ModelMetadata{
		Inputs: []kserve.TensorMetadata{
			{Name: "x", DataType: "FP32", Shape: []int64{-1, 2, 2}},
			{Name: "words", DataType: "BYTES", Shape: []int64{-1, 3}},
		},
		Outputs: []kserve.TensorMetadata{{Name: "y", DataType: "FP32", Shape: []int64{-1, 1}}},
	}}
}

// writeInputDir writes files (name: contents) into a new folder.
func writeInputDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600))
	}
	return dir
}

// fp32Bytes is vs as they lie in memory.
func fp32Bytes(vs ...float32) string {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return string(b)
}

// TestInputDirBuildsARequest: perf_analyzer's --input-data DIR makes one
// request, each input's file its binary tensor (a BYTES input's lines its
// elements), one row's data repeated for a batch of several.
func TestInputDirBuildsARequest(t *testing.T) {
	dir := writeInputDir(t, map[string]string{"x": fp32Bytes(1, 2, 3, 4), "words": "alpha\nbeta\ngamma\n", "README": "not read"})
	d, err := ReadInputDir(dir)
	require.NoError(t, err)
	require.True(t, d.IsDir())
	require.Equal(t, 1, d.Len())
	for _, rows := range []int{1, 4} {
		m := dirModel()
		require.NoError(t, m.SetRows("m", rows))
		ps, err := d.payloads(m)
		require.NoError(t, err)
		require.Len(t, ps, 1)
		req, err := kserve.DecodeRequest(ps[0].Body, ps[0].JSONLen)
		require.NoError(t, err, "a request the daemon decodes")
		require.Equal(t, []int64{int64(rows), 2, 2}, req.Inputs[0].Shape)
		x, err := req.Inputs[0].Float32s()
		require.NoError(t, err)
		require.Equal(t, []float32{1, 2, 3, 4}, x[:4])
		require.Equal(t, x[:4], x[len(x)-4:], "each row the file's")
		require.Equal(t, []int64{int64(rows), 3}, req.Inputs[1].Shape)
		words, err := tensor.BytesElements(req.Inputs[1].Data)
		require.NoError(t, err)
		require.Equal(t, [][]byte{[]byte("alpha"), []byte("beta"), []byte("gamma")}, words[:3])
		require.Len(t, words, 3*rows)
	}
}

// TestInputDirRejects: a folder that does not give the model's inputs
// says which file and why.
func TestInputDirRejects(t *testing.T) {
	good := map[string]string{"x": fp32Bytes(1, 2, 3, 4), "words": "a\nb\nc"}
	with := func(name, data string) map[string]string {
		files := map[string]string{}
		for k, v := range good {
			files[k] = v
		}
		if data == "" {
			delete(files, name)
		} else {
			files[name] = data
		}
		return files
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		err   string
	}{
		{name: "no file for an input", files: with("words", ""), err: `no file for input "words"`},
		{name: "too few bytes", files: with("x", fp32Bytes(1, 2, 3)), err: `input "x": its file holds 12 bytes; shape [1 2 2] of FP32 takes 16`},
		{name: "too many lines", files: with("words", "a\nb\nc\nd\n"), err: `input "words": its file holds 4 lines (elements); shape [1 3] holds 3`},
		{name: "an expected answer", files: with("y", fp32Bytes(0)), err: `output "y"'s expected answer, which gpuletd load does not check`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ReadInputDir(writeInputDir(t, tc.files))
			require.NoError(t, err)
			_, err = d.payloads(dirModel())
			require.ErrorIs(t, err, ErrPayload)
			require.ErrorContains(t, err, tc.err)
		})
	}
	_, err := ReadInputDir(filepath.Join(t.TempDir(), "none"))
	require.ErrorIs(t, err, ErrConfig)
	file := filepath.Join(t.TempDir(), "data.json")
	require.NoError(t, os.WriteFile(file, []byte(`{}`), 0o600))
	_, err = ReadInputDir(file)
	require.ErrorContains(t, err, "is not a folder")
	sub := writeInputDir(t, good)
	require.NoError(t, os.Remove(filepath.Join(sub, "x")))
	require.NoError(t, os.Mkdir(filepath.Join(sub, "x"), 0o700))
	d, err := ReadInputDir(sub)
	require.NoError(t, err)
	_, err = d.payloads(dirModel())
	require.ErrorContains(t, err, "is not a file")
}

// Data files given one after another send their requests in turn; a
// folder takes no other, and the requests held stay bounded.
func TestInputDataAppend(t *testing.T) {
	a, err := ParseInputData([]byte(`{"data": [{"x": [1, 2, 3, 4]}]}`))
	require.NoError(t, err)
	b, err := ParseInputData([]byte(`{"data": [{"x": [5, 6, 7, 8]}, {"x": [9, 9, 9, 9]}]}`))
	require.NoError(t, err)
	require.NoError(t, a.Append(b))
	require.Equal(t, 3, a.Len())
	dir, err := ReadInputDir(t.TempDir())
	require.NoError(t, err)
	require.ErrorIs(t, a.Append(dir), ErrConfig)
	big := &InputData{entries: make([]map[string]json.RawMessage, MaxDataEntries)}
	require.ErrorContains(t, a.Append(big), "at most 4096 are held")
}
