package repository

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Triton's --model-config-name: configs/<name>.pbtxt serves where the
// folder has one, config.pbtxt where it does not, and without a name
// config.pbtxt alone, as in Triton's documented examples; a custom
// configuration that cannot be read or parsed is the folder's problem, named.
func TestCustomConfigurationByName(t *testing.T) {
	pbtxt := func(batch, slo string) string {
		return `platform: "onnxruntime_onnx" max_batch_size: ` + batch + ` parameters { key: "slo" value { string_value: "` + slo + `" } }`
	}
	tests := []struct {
		name       string
		files      map[string]string
		configName string
		batch      int
		slo        time.Duration
		files2     []string // ConfigFiles
		sloSource  string
		err        string
	}{
		{name: "the named one", configName: "h100", batch: 16, slo: 20 * time.Millisecond, files2: []string{"configs/h100.pbtxt"}, sloSource: "configs/h100.pbtxt parameters",
			files: map[string]string{"config.pbtxt": pbtxt("4", "50ms"), "configs/h100.pbtxt": pbtxt("16", "20ms"), "configs/v100.pbtxt": pbtxt("2", "90ms")}},
		{name: "config.pbtxt where the folder has no file of the name", configName: "h100", batch: 4, slo: 50 * time.Millisecond, files2: []string{"config.pbtxt"}, sloSource: SLOFromPbtxt,
			files: map[string]string{"config.pbtxt": pbtxt("4", "50ms"), "configs/v100.pbtxt": pbtxt("2", "90ms")}},
		{name: "no name: config.pbtxt, not configs/config.pbtxt", batch: 4, slo: 50 * time.Millisecond, files2: []string{"config.pbtxt"}, sloSource: SLOFromPbtxt,
			files: map[string]string{"config.pbtxt": pbtxt("4", "50ms"), "configs/config.pbtxt": pbtxt("8", "10ms")}},
		{name: "the name config", configName: "config", batch: 8, slo: 10 * time.Millisecond, files2: []string{"configs/config.pbtxt"}, sloSource: "configs/config.pbtxt parameters",
			files: map[string]string{"config.pbtxt": pbtxt("4", "50ms"), "configs/config.pbtxt": pbtxt("8", "10ms")}},
		{name: "a custom configuration alone", configName: "h100", batch: 16, slo: 20 * time.Millisecond, files2: []string{"configs/h100.pbtxt"}, sloSource: "configs/h100.pbtxt parameters",
			files: map[string]string{"configs/h100.pbtxt": pbtxt("16", "20ms")}},
		{name: "config.yaml over the custom one", configName: "h100", batch: 16, slo: 30 * time.Millisecond, files2: []string{"configs/h100.pbtxt", YAMLConfigFile}, sloSource: SLOFromYAML,
			files: map[string]string{"configs/h100.pbtxt": pbtxt("16", "20ms"), YAMLConfigFile: "slo: 30ms\n"}},
		{name: "a file named configs", configName: "h100", batch: 4, slo: 50 * time.Millisecond, files2: []string{"config.pbtxt"}, sloSource: SLOFromPbtxt,
			files: map[string]string{"config.pbtxt": pbtxt("4", "50ms"), "configs": "notes"}},
		{name: "a broken custom configuration", configName: "h100", err: "configs/h100.pbtxt: ",
			files: map[string]string{"config.pbtxt": pbtxt("4", "50ms"), "configs/h100.pbtxt": "max_batch_size: lots"}},
		{name: "a folder of the name", configName: "h100", err: "configs/h100.pbtxt: ",
			files: map[string]string{"config.pbtxt": pbtxt("4", "50ms"), "configs/h100.pbtxt/x": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"1/model.onnx": "onnx"}
			for k, v := range tt.files {
				files[k] = v
			}
			root := writeRepo(t, map[string]entry{"m": {files: files}})
			m, err := Load(Roots{root}, "m", Options{Read: fakeReader, ConfigName: tt.configName})
			if tt.err != "" {
				require.ErrorIs(t, err, ErrInvalidModel)
				require.ErrorContains(t, err, filepath.Join(root, "m", tt.err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.batch, m.Config.MaxBatchSize)
			require.Equal(t, tt.slo, m.Config.SLO.D())
			require.Equal(t, tt.files2, m.ConfigFiles)
			require.Equal(t, tt.sloSource, m.SLOSource)
		})
	}
}

// A pipeline read under a configuration name takes its steps from its
// custom configuration, and so does a pipeline that runs it as a step.
func TestCustomConfigurationOfAPipeline(t *testing.T) {
	step := `platform: "onnxruntime_onnx" max_batch_size: 4 parameters { key: "slo" value { string_value: "10ms" } }`
	ensemble := func(model, in, out string) string {
		return `platform: "ensemble" max_batch_size: 4 input [ { name: "IN" data_type: TYPE_FP32 dims: [ 1, 28, 28 ] } ]
output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 10 ] } ]
parameters { key: "slo" value { string_value: "40ms" } }
ensemble_scheduling { step [ { model_name: "` + model + `" model_version: -1 input_map { key: "` + in + `" value: "IN" } output_map { key: "` + out + `" value: "OUT" } } ] }`
	}
	root := writeRepo(t, map[string]entry{
		"a":     {files: map[string]string{"1/model.onnx": "onnx", "config.pbtxt": step}},
		"b":     {files: map[string]string{"1/model.onnx": "onnx", "config.pbtxt": step}},
		"pipe":  {files: map[string]string{"config.pbtxt": ensemble("a", "input", "output"), "configs/h100.pbtxt": ensemble("b", "input", "output")}},
		"outer": {files: map[string]string{"config.pbtxt": ensemble("pipe", "IN", "OUT")}}, // runs pipe's steps in its place
	})
	for _, name := range []string{"pipe", "outer"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, name, "1"), 0o755))
	}
	for _, pipeline := range []string{"pipe", "outer"} {
		for name, want := range map[string]string{"": "a", "h100": "b"} {
			m, err := Load(Roots{root}, pipeline, Options{Read: fakeReader, ConfigName: name})
			require.NoError(t, err, name)
			require.Len(t, m.Config.Ensemble.Steps, 1)
			require.Equal(t, want, m.Config.Ensemble.Steps[0].Model, "%s under configuration name %q", pipeline, name)
		}
	}
}

// The scan says which folders a configuration name picked, and warns,
// naming the custom configurations the folders hold, when it picked none.
func TestConfigNameNote(t *testing.T) {
	pbtxt := `platform: "onnxruntime_onnx" max_batch_size: 4`
	root := writeRepo(t, map[string]entry{
		"a": {config: goodConfig, files: map[string]string{"1/model.onnx": "onnx", "configs/h100.pbtxt": pbtxt, "configs/v100.pbtxt": pbtxt}},
		"b": {config: goodConfig, files: map[string]string{"1/model.onnx": "onnx", "configs/h100.pbtxt": pbtxt, "configs/a100.pbtxt": pbtxt}},
		"c": {config: goodConfig, files: map[string]string{"1/model.onnx": "onnx"}},
	})
	tests := []struct {
		name, note string
		warn       bool
	}{
		{name: "", note: ""},
		{name: "h100", note: "model_config_name h100: configs/h100.pbtxt serves a, b; the other folders serve with their config.pbtxt"},
		{name: "v100", note: "model_config_name v100: configs/v100.pbtxt serves a; the other folders serve with their config.pbtxt"},
		{name: "H100", warn: true, note: "model_config_name H100: no model folder serves with a configs/H100.pbtxt " +
			"(the folders' configs hold a100.pbtxt, h100.pbtxt, v100.pbtxt); each serves with its config.pbtxt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := Scan(Roots{root}, Options{Read: fakeReader, ConfigName: tt.name})
			require.NoError(t, err)
			require.Empty(t, ix.Broken)
			note, warn := ix.ConfigNameNote()
			require.Equal(t, tt.note, note)
			require.Equal(t, tt.warn, warn)
		})
	}
}
