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
	_, err := uploadBody(dir, "")
	require.ErrorContains(t, err, "no model files in the folder")
	write("1/model.onnx", "onnx bytes")
	write("2/sub/weights.bin", "weights")
	write("labels.txt", "a\nb\n")
	configOf := func(t *testing.T) string {
		t.Helper()
		body, err := uploadBody(dir, "")
		require.NoError(t, err)
		var req struct {
			Parameters map[string]string `json:"parameters"`
		}
		require.NoError(t, json.Unmarshal(body, &req))
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
		return req.Parameters["config"]
	}
	tests := []struct {
		name, pbtxt, yaml string // "": no such file
		want              string
	}{
		{name: "no configuration file: the model file and default_slo say it", want: `{}`},
		{name: "config.pbtxt", pbtxt: "name: \"m\"\nmax_batch_size: 4 # a comment\nparameters { key: \"slo\" value { string_value: \"20ms\" } }\n",
			want: `{"name": "m", "max_batch_size": 4, "parameters": {"slo": {"string_value": "20ms"}}}`},
		{name: "config.yaml", yaml: "slo: 1s\nmax_batch_size: 8\nprofile: resnet50\n",
			want: `{"max_batch_size": 8, "parameters": {"slo": {"string_value": "1s"}, "profile": {"string_value": "resnet50"}}}`},
		{name: "config.yaml over config.pbtxt", pbtxt: "name: \"m\"\nmax_batch_size: 4\nparameters { key: \"slo\" value { string_value: \"20ms\" } }\n",
			yaml: "slo: 1s\n", want: `{"name": "m", "max_batch_size": 4, "parameters": {"slo": {"string_value": "1s"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for file, text := range map[string]string{"config.pbtxt": tt.pbtxt, "config.yaml": tt.yaml} {
				_ = os.Remove(filepath.Join(dir, file))
				if text != "" {
					write(file, text)
				}
			}
			require.JSONEq(t, tt.want, configOf(t), "Triton's JSON field names, as the daemon reads a config parameter")
		})
	}

	write("config.pbtxt", "name: \"m\"\nmax_batch: 4\n")
	_, err = uploadBody(dir, "")
	require.ErrorContains(t, err, "config.pbtxt")
	require.NoError(t, os.Remove(filepath.Join(dir, "config.pbtxt")))
	write("config.yaml", "slo: 1s\nmax_batch: 4\n")
	_, err = uploadBody(dir, "")
	require.ErrorContains(t, err, "read config.yaml")
	_, err = uploadBody(filepath.Join(dir, "labels.txt"), "")
	require.ErrorContains(t, err, "not a model folder")
	require.NoError(t, os.Remove(filepath.Join(dir, "config.yaml")))

	// A custom configuration (Triton's --model-config-name) goes in place
	// of config.pbtxt when named, and is no model file either way.
	write("config.pbtxt", "name: \"m\"\nmax_batch_size: 4\n")
	write("configs/h100.pbtxt", "name: \"m\"\nmax_batch_size: 16\n")
	for name, want := range map[string]string{"": `{"name": "m", "max_batch_size": 4}`, "h100": `{"name": "m", "max_batch_size": 16}`,
		"v100": `{"name": "m", "max_batch_size": 4}`} {
		body, err := uploadBody(dir, name)
		require.NoError(t, err)
		var req struct {
			Parameters map[string]string `json:"parameters"`
		}
		require.NoError(t, json.Unmarshal(body, &req))
		require.JSONEq(t, want, req.Parameters["config"], "configuration name %q", name)
		require.NotContains(t, req.Parameters, "file:configs/h100.pbtxt")
		require.Contains(t, req.Parameters, "file:1/model.onnx")
	}
	write("configs/h100.pbtxt", "max_batch: 16\n")
	_, err = uploadBody(dir, "h100")
	require.ErrorContains(t, err, "configs/h100.pbtxt")
}
