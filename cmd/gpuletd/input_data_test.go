package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// --input-data reads random, zero or a request file, and refuses a file
// with what cannot send it.
func TestInputData(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "req.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"inputs":[{"name":"ids","shape":[1,2],"datatype":"INT64","data":[1,0]}]}`), 0o644))
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"inputs":"no"}`), 0o644))

	for _, v := range []string{"", "random"} {
		in, err := readInputData(v)
		require.NoError(t, err)
		require.Equal(t, inputData{}, in)
	}
	in, err := readInputData("zero")
	require.NoError(t, err)
	require.True(t, in.zero)
	require.NoError(t, in.check(3, 4, true, true), "zero data goes anywhere")

	in, err = readInputData(good)
	require.NoError(t, err)
	require.NotNil(t, in.payload)
	require.Equal(t, int64(-1), in.payload.JSONLen)
	require.NoError(t, in.check(1, 1, false, false))
	require.ErrorContains(t, in.check(2, 1, false, false), "one model's request")
	require.ErrorContains(t, in.check(1, 4, false, false), "--inputs")
	require.ErrorContains(t, in.check(1, 1, true, false), "not as binary tensors")

	require.ErrorContains(t, in.check(1, 1, false, true), "not as binary tensors or through shared memory")

	// perf_analyzer's data file: its entries say how each input goes.
	data := filepath.Join(dir, "data.json")
	require.NoError(t, os.WriteFile(data, []byte(`{"data": [{"ids": [1, 0]}]}`), 0o644))
	in, err = readInputData(data)
	require.NoError(t, err)
	require.NotNil(t, in.data)
	require.NoError(t, in.check(1, 1, false, true), "one request, in shared memory")
	require.ErrorContains(t, in.check(1, 1, true, false), "leave out --binary")
	// Its folder: binary tensors, anywhere.
	in, err = readInputData(dir)
	require.NoError(t, err)
	require.True(t, in.data.IsDir())
	require.NoError(t, in.check(1, 1, true, true))
	require.ErrorContains(t, in.check(2, 1, false, false), "one model's request")

	// Given several times, as perf_analyzer takes it: data files, their
	// requests in turn; anything else among them is refused.
	data2 := filepath.Join(dir, "data2.json")
	require.NoError(t, os.WriteFile(data2, []byte(`{"data": [{"ids": [2, 0]}, {"ids": [3, 0]}]}`), 0o644))
	in, err = readInputDataFiles([]string{data, data2})
	require.NoError(t, err)
	require.Equal(t, 3, in.data.Len())
	for _, with := range []string{good, "zero", dir} {
		_, err = readInputDataFiles([]string{data, with})
		require.ErrorContains(t, err, "--input-data given 2 times: each must be a perf_analyzer data file", with)
	}
	in, err = readInputDataFiles([]string{"random"})
	require.NoError(t, err)
	require.Equal(t, inputData{}, in)

	_, err = readInputData(bad)
	require.ErrorContains(t, err, "not a KServe v2 JSON request")
	_, err = readInputData(filepath.Join(dir, "absent.json"))
	require.ErrorContains(t, err, "give random, zero or a request file")
}
