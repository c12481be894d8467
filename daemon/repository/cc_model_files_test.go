package repository

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCCModelFilenames: a config.pbtxt's cc_model_filenames chooses the
// model file by the compute capability of the node's GPUs, as Triton
// chooses it by the GPU an instance runs on; where none or several apply,
// the default file is served and the notes say why.
func TestCCModelFilenames(t *testing.T) {
	const files = `default_model_filename: "net.onnx"
cc_model_filenames [ { key: "8.0" value: "net_a100.onnx" }, { key: "9.0" value: "net_h100.onnx" }, { key: "9.1" value: "net_h100.onnx" } ]
`
	root := writeRepo(t, map[string]entry{"m": pbtxtEntry(lenetWith("m", files),
		map[string]string{"1/net.onnx": "onnx", "1/net_a100.onnx": "onnx", "1/net_h100.onnx": "onnx"})})
	for _, tc := range []struct {
		name string
		ccs  []string
		file string
		note string
	}{
		{"no GPU", nil, "net.onnx", "cc_model_filenames: no NVIDIA GPU serves here: the default model file (net.onnx) is served"},
		{"H100s", []string{"9.0"}, "net_h100.onnx", "cc_model_filenames: the GPUs here are of compute capability 9.0: net_h100.onnx is served"},
		{"A100s", []string{"8.0"}, "net_a100.onnx", "compute capability 8.0: net_a100.onnx is served"},
		{"V100s: no file of theirs", []string{"7.0"}, "net.onnx", "cc_model_filenames has no file for compute capability 7.0, the GPUs' here: the default model file (net.onnx) is served"},
		{"two capabilities, one file", []string{"9.0", "9.1"}, "net_h100.onnx", "compute capabilities 9.0, 9.1, all given net_h100.onnx: it is served"},
		{"two capabilities, two files", []string{"8.0", "9.0"}, "net.onnx", "not all given the same file, and gpuletd serves a model from one file on every gpu-let: the default model file (net.onnx) is served"},
		{"one capability of two has no file", []string{"7.0", "9.0"}, "net.onnx", "not all given the same file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second, ComputeCapabilities: tc.ccs})
			require.NoError(t, err)
			require.Equal(t, filepath.Join(root, "m", "1", tc.file), m.File)
			require.Len(t, m.Notes, 1)
			require.Contains(t, m.Notes[0], tc.note)
		})
	}

	// Without default_model_filename the platform's file is the default.
	root = writeRepo(t, map[string]entry{"m": pbtxtEntry(lenetWith("m", `cc_model_filenames { key: "9.0" value: "net_h100.onnx" }`),
		map[string]string{"1/model.onnx": "onnx", "1/net_h100.onnx": "onnx", "2/model.onnx": "onnx"})})
	m, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second, ComputeCapabilities: []string{"8.0"}})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "m", "2", "model.onnx"), m.File)
	require.Contains(t, m.Notes[0], "the default model file (the platform's: model.onnx or model.pt) is served")
	// A version folder without the file its GPUs are given cannot be served.
	_, err = Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second, ComputeCapabilities: []string{"9.0"}})
	require.ErrorContains(t, err, `no net_h100.onnx (cc_model_filenames["9.0"])`)
	require.ErrorContains(t, err, filepath.Join("m", "2"))
}

// TestCCModelFilenamesAreChecked: a key that is not a compute capability,
// or a file name outside the version folder, makes the folder invalid.
func TestCCModelFilenamesAreChecked(t *testing.T) {
	for _, tc := range []struct{ name, more, err string }{
		{"a GPU's name for a key", `cc_model_filenames { key: "h100" value: "net.onnx" }`, `cc_model_filenames: key "h100" is not a compute capability`},
		{"a path", `cc_model_filenames { key: "9.0" value: "../net.onnx" }`, `cc_model_filenames["9.0"]: "../net.onnx" must be a file name inside the version folder`},
		{"no name", `cc_model_filenames { key: "9.0" value: "" }`, `cc_model_filenames["9.0"]: "" must be a file name inside the version folder`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRepo(t, map[string]entry{"m": pbtxtEntry(lenetWith("m", tc.more), map[string]string{"1/model.onnx": "onnx"})})
			_, err := Load(Roots{root}, "m", Options{Read: fakeReader, DefaultSLO: time.Second, ComputeCapabilities: []string{"9.0"}})
			require.ErrorContains(t, err, tc.err)
		})
	}
}
