package modelzoo_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/modelzoo"
)

// repoConfig is the part of config.yaml the daemon reads.
type repoConfig struct {
	SLO          string `yaml:"slo"`
	MaxBatchSize int    `yaml:"max_batch_size"`
	Profile      string `yaml:"profile"`
}

func TestWriteRepositoryDemoSet(t *testing.T) {
	initORT(t)
	dir := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WriteRepository(dir, nil, 3))

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		require.True(t, e.IsDir(), e.Name())
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, modelzoo.DemoModels(), names)

	for _, name := range modelzoo.DemoModels() {
		t.Run(name, func(t *testing.T) {
			m, err := modelzoo.Lookup(name)
			require.NoError(t, err)

			text, err := os.ReadFile(filepath.Join(dir, name, "config.yaml"))
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(text), "# "+name+": "), string(text))
			require.Contains(t, strings.SplitN(string(text), "\n", 2)[0], "weights are random (modelzoo seed 3)")
			var cfg repoConfig
			dec := yaml.NewDecoder(bytes.NewReader(text))
			dec.KnownFields(true)
			require.NoError(t, dec.Decode(&cfg))
			slo, err := time.ParseDuration(cfg.SLO)
			require.NoError(t, err)
			require.Equal(t, m.SLO, slo)
			require.Equal(t, m.MaxBatchSize, cfg.MaxBatchSize)
			require.Equal(t, m.Profile, cfg.Profile)

			modelPath := filepath.Join(dir, name, modelzoo.ModelVersion, "model.onnx")
			onDisk, err := os.ReadFile(modelPath)
			require.NoError(t, err)
			want, err := modelzoo.BuildBytes(name, 3)
			require.NoError(t, err)
			require.True(t, bytes.Equal(want, onDisk), "model.onnx differs from BuildBytes")

			info, err := onnxrt.ReadModelInfo(modelPath)
			require.NoError(t, err)
			require.Len(t, info.Inputs, 1)
			require.Equal(t, m.InputShape, info.Inputs[0].Shape)

			requireNoTempFiles(t, filepath.Join(dir, name))
		})
	}
}

func TestWriteRepositoryRefusesNonEmpty(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "README")
	require.NoError(t, os.WriteFile(keep, []byte("mine"), 0o644))

	err := modelzoo.WriteRepository(dir, []string{"mlp"}, 1)
	require.ErrorIs(t, err, modelzoo.ErrRepositoryNotEmpty)
	require.Contains(t, err.Error(), dir)
	_, err = os.Stat(filepath.Join(dir, "mlp"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing written on refusal")

	require.NoError(t, modelzoo.WriteRepository(dir, []string{"mlp"}, 1, modelzoo.WithOverwrite()))
	first, err := os.ReadFile(filepath.Join(dir, "mlp", "1", "model.onnx"))
	require.NoError(t, err)

	// Overwriting replaces the model's files and leaves others alone.
	require.NoError(t, modelzoo.WriteRepository(dir, []string{"mlp"}, 2, modelzoo.WithOverwrite()))
	second, err := os.ReadFile(filepath.Join(dir, "mlp", "1", "model.onnx"))
	require.NoError(t, err)
	require.False(t, bytes.Equal(first, second))
	cfg, err := os.ReadFile(filepath.Join(dir, "mlp", "config.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(cfg), "modelzoo seed 2")
	mine, err := os.ReadFile(keep)
	require.NoError(t, err)
	require.Equal(t, "mine", string(mine))
	requireNoTempFiles(t, dir)
}

func TestWriteRepositoryEmptyExistingDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(dir, []string{"lenet5"}, 1))
	_, err := os.Stat(filepath.Join(dir, "lenet5", "1", "model.onnx"))
	require.NoError(t, err)
}

func TestWriteRepositoryUnknownModelWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	err := modelzoo.WriteRepository(dir, []string{"mlp", "bert"}, 1)
	require.ErrorIs(t, err, modelzoo.ErrUnknownModel)
	_, err = os.Stat(dir)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestWriteRepositoryOntoFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	require.Error(t, modelzoo.WriteRepository(file, []string{"mlp"}, 1))
}

func requireNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		require.NotContains(t, d.Name(), ".tmp-", "temporary file left: %s", path)
		return nil
	}))
}
