package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/stretchr/testify/require"
)

// models synth --pipeline writes a repository the daemon's own scan reads
// as a pipeline whose steps' models are there, with the classifier's variant.
func TestModelsSynthPipeline(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	code, out, stderr := runCLI(t, "models", "synth", dir, "--pipeline", "80ms")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, modelzoo.PipelineName)
	require.Contains(t, out, "default_slo")

	lib, err := onnxrt.FindLibrary("")
	require.NoError(t, err)
	require.NoError(t, onnxrt.Init(lib))
	ix, err := repository.Scan(repository.Roots{dir}, repository.Options{Read: repository.ReadONNXInterface, Open: daemon.OpenInRuntime, DefaultSLO: 20 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, ix.Broken)
	require.ElementsMatch(t, []string{modelzoo.PipelineName, modelzoo.DetectorModel, modelzoo.ClassifierModel, modelzoo.LiteClassifierModel}, ix.Names())
	p, err := ix.Get(modelzoo.PipelineName)
	require.NoError(t, err)
	require.Equal(t, 80*time.Millisecond, p.Config.SLO.D())
	steps, err := p.CheckEnsemble(func(name string) *repository.Model { return ix.Models[name] })
	require.NoError(t, err)
	require.Len(t, steps, 2)
	lite, err := ix.Get(modelzoo.LiteClassifierModel)
	require.NoError(t, err)
	require.Equal(t, modelzoo.ClassifierModel, lite.Config.VariantOf)

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"not a duration", []string{"--pipeline", "80"}, "duration"},
		{"with models", []string{"--pipeline", "80ms", "--models", "lenet5"}, "--models and --pipeline"},
		{"not empty", []string{"--pipeline", "80ms"}, "not empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, err := os.ReadDir(dir)
			require.NoError(t, err)
			code, _, stderr := runCLI(t, append([]string{"models", "synth", dir}, tc.args...)...)
			require.Equal(t, 1, code)
			require.Contains(t, stderr, tc.want)
			after, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, after, len(before))
		})
	}
}

// models synth --models add-one says the library its configuration names
// is not written, and where one is built.
func TestModelsSynthCustomOpModel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	code, out, stderr := runCLI(t, "models", "synth", dir, "--models", modelzoo.CustomOpModel)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "add-one: its config.pbtxt names libaddone.so, its operator's library, which is not written")
	cfg, err := os.ReadFile(filepath.Join(dir, modelzoo.CustomOpModel, "config.pbtxt"))
	require.NoError(t, err)
	require.Contains(t, string(cfg), `model_operations { op_library_filename: [ "libaddone.so" ] }`)
	code, out, _ = runCLI(t, "models", "synth", t.TempDir(), "--models", "lenet5", "--force")
	require.Equal(t, 0, code)
	require.NotContains(t, out, "library")
}
