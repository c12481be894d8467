package repository

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// writeSplitModel writes lenet5 with its weights in data beside it and
// returns the model file's path.
func writeSplitModel(t *testing.T, dir, location string, seed uint64) string {
	t.Helper()
	m, err := modelzoo.Build("lenet5", seed)
	require.NoError(t, err)
	data := modelzoo.SplitExternalData(m, location)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	if filepath.IsLocal(location) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, location), data, 0o644))
	}
	path := filepath.Join(dir, "model.onnx")
	require.NoError(t, os.WriteFile(path, marshal(t, m), 0o644))
	return path
}

func TestDigestOfAModelKeptInOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.onnx")
	b, err := modelzoo.BuildBytes("lenet5", 1)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	d, err := DigestFile(path, PlatformONNX)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	require.Equal(t, hex.EncodeToString(sum[:]), d.SHA256, "the file's own sha256: stored profiles keep their key")
	require.Equal(t, int64(len(b)), d.Bytes)
	require.Empty(t, d.ExternalData)
}

func TestDigestCoversExternalData(t *testing.T) {
	dir := t.TempDir()
	path := writeSplitModel(t, dir, "model.onnx.data", 1)
	d, err := DigestFile(path, PlatformONNX)
	require.NoError(t, err)
	require.Equal(t, []string{"model.onnx.data"}, d.ExternalData)
	model, err := os.Stat(path)
	require.NoError(t, err)
	data, err := os.Stat(filepath.Join(dir, "model.onnx.data"))
	require.NoError(t, err)
	require.Equal(t, model.Size()+data.Size(), d.Bytes)

	// Other weights under the same model file: another digest.
	other := writeSplitModel(t, t.TempDir(), "model.onnx.data", 2)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(other), "model.onnx.data"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.onnx.data"), b, 0o644))
	d2, err := DigestFile(path, PlatformONNX)
	require.NoError(t, err)
	require.NotEqual(t, d.SHA256, d2.SHA256)
	require.Equal(t, d.Bytes, d2.Bytes)
}

func TestDigestRefusesExternalDataItCannotRead(t *testing.T) {
	cases := []struct {
		name     string
		location string
		spoil    func(t *testing.T, dir string)
		want     string
	}{
		{"missing", "model.onnx.data", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "model.onnx.data")))
		}, `keeps the weights of 4 tensor(s) ("conv2.weight" first) in model.onnx.data beside it, which is missing: copy it with the model file`},
		{"cut short", "model.onnx.data", func(t *testing.T, dir string) {
			require.NoError(t, os.Truncate(filepath.Join(dir, "model.onnx.data"), 1000))
		}, "external data model.onnx.data holds 1000 bytes, but tensor"},
		{"a folder", "weights", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "weights")))
			require.NoError(t, os.Mkdir(filepath.Join(dir, "weights"), 0o755))
		}, "external data weights is not a regular file"},
		{"above the folder", "../model.onnx.data", nil, `is kept in "../model.onnx.data", outside the model's folder`},
		{"an absolute path", "/etc/passwd", nil, `is kept in "/etc/passwd", outside the model's folder`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "1")
			path := writeSplitModel(t, dir, tc.location, 1)
			if tc.spoil != nil {
				tc.spoil(t, dir)
			}
			_, err := DigestFile(path, PlatformONNX)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestDigestReadsTorchScriptAsBytes(t *testing.T) {
	// A .pt file is not parsed: whatever it holds, its digest is its bytes'.
	m := &onnxpb.ModelProto{Graph: &onnxpb.GraphProto{Initializer: []*onnxpb.TensorProto{modelzoo.ExternalTensor("w", "missing.bin", 0, 4)}}}
	path := filepath.Join(t.TempDir(), "model.pt")
	b := marshal(t, m)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	d, err := DigestFile(path, PlatformTorchScript)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	require.Equal(t, hex.EncodeToString(sum[:]), d.SHA256)
	_, err = DigestFile(path, PlatformONNX)
	require.ErrorContains(t, err, "in missing.bin beside it, which is missing")
}

func TestDigestOfTensorsInSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	m := &onnxpb.ModelProto{Graph: &onnxpb.GraphProto{Initializer: []*onnxpb.TensorProto{
		modelzoo.ExternalTensor("w2", "b.bin", 0, 16), modelzoo.ExternalTensor("w1", "a.bin", 0, 8), modelzoo.ExternalTensor("w3", "b.bin", 16, 16)}}}
	path := filepath.Join(dir, "model.onnx")
	require.NoError(t, os.WriteFile(path, marshal(t, m), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.bin"), make([]byte, 16), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.bin"), make([]byte, 31), 0o644))
	_, err := DigestFile(path, PlatformONNX)
	require.ErrorContains(t, err, `external data b.bin holds 31 bytes, but tensor "w3" reads up to byte 32`)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.bin"), make([]byte, 32), 0o644))
	d, err := DigestFile(path, PlatformONNX)
	require.NoError(t, err)
	require.Equal(t, []string{"a.bin", "b.bin"}, d.ExternalData)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, st.Size()+48, d.Bytes)

	// A byte moved from one file to the other: the same bytes in a row,
	// another digest.
	require.NoError(t, os.Truncate(filepath.Join(dir, "a.bin"), 15))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.bin"), make([]byte, 33), 0o644))
	d2, err := DigestFile(path, PlatformONNX)
	require.NoError(t, err)
	require.Equal(t, d.Bytes, d2.Bytes)
	require.NotEqual(t, d.SHA256, d2.SHA256)
}

// anyModel reads every model file as one input and one output, for tests
// about where the file is rather than what it holds.
func anyModel(string) ([]TensorSpec, []TensorSpec, error) {
	return []TensorSpec{{Name: "input", DataType: tensor.FP32, Dims: []int64{-1, 1, 28, 28}}},
		[]TensorSpec{{Name: "output", DataType: tensor.FP32, Dims: []int64{-1, 10}}}, nil
}

// Triton's ONNX Runtime backend takes a folder named as the model file for
// a model in several files, and reads model.onnx in it.
func TestAnONNXModelInAFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "digits")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("slo: 50ms\nmax_batch_size: 8\n"), 0o644))
	inner := writeSplitModel(t, filepath.Join(dir, "1", "model.onnx"), "model.onnx.data", 1)

	m, err := Load(Roots{root}, "digits", Options{Read: anyModel})
	require.NoError(t, err)
	require.Equal(t, inner, m.File)
	require.Equal(t, PlatformONNX, m.Platform)
	require.Equal(t, []string{"model.onnx.data"}, m.ExternalData)

	// The same under default_model_filename, as Triton reads it.
	require.NoError(t, os.Rename(filepath.Join(dir, "1", "model.onnx"), filepath.Join(dir, "1", "big.onnx")))
	require.NoError(t, os.Remove(filepath.Join(dir, "config.yaml")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.pbtxt"), []byte(`name: "digits" platform: "onnxruntime_onnx" max_batch_size: 8
default_model_filename: "big.onnx" parameters { key: "slo" value { string_value: "50ms" } }`), 0o644))
	m, err = Load(Roots{root}, "digits", Options{Read: anyModel})
	require.NoError(t, err, "%v", m)
	require.Equal(t, filepath.Join(dir, "1", "big.onnx", "model.onnx"), m.File)

	// A folder without model.onnx says what it lacks.
	require.NoError(t, os.Remove(filepath.Join(dir, "1", "big.onnx", "model.onnx")))
	_, err = Load(Roots{root}, "digits", Options{Read: anyModel})
	require.ErrorIs(t, err, ErrInvalidModel)
	require.ErrorContains(t, err, "big.onnx is a folder without a file model.onnx in it")
}

// marshal is m's bytes.
func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	require.NoError(t, err)
	return b
}
