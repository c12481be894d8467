package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUploadBody(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	_, err := uploadBody(dir)
	require.ErrorContains(t, err, "no config.pbtxt")
	write("config.pbtxt", "name: \"m\"\nmax_batch_size: 4 # a comment\nparameters { key: \"slo\" value { string_value: \"20ms\" } }\n")
	_, err = uploadBody(dir)
	require.ErrorContains(t, err, "no model files beside config.pbtxt")
	write("1/model.onnx", "onnx bytes")
	write("2/sub/weights.bin", "weights")
	write("labels.txt", "a\nb\n")
	write("config.yaml", "slo: 1s\n")
	body, err := uploadBody(dir)
	require.NoError(t, err)
	var req struct {
		Parameters map[string]string `json:"parameters"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	require.JSONEq(t, `{"name": "m", "max_batch_size": 4, "parameters": {"slo": {"string_value": "20ms"}}}`, req.Parameters["config"],
		"Triton's JSON field names, as the daemon reads a config parameter")
	files := map[string]string{}
	for k, v := range req.Parameters {
		if k == "config" {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(v)
		require.NoError(t, err)
		files[k] = string(data)
	}
	require.Equal(t, map[string]string{"file:1/model.onnx": "onnx bytes", "file:2/sub/weights.bin": "weights", "file:labels.txt": "a\nb\n"}, files,
		"every file but the configuration's")

	write("config.pbtxt", "name: \"m\"\nmax_batch: 4\n")
	_, err = uploadBody(dir)
	require.ErrorContains(t, err, "config.pbtxt")
	_, err = uploadBody(filepath.Join(dir, "labels.txt"))
	require.ErrorContains(t, err, "not a model folder")
}
