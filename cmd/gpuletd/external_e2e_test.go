package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/stretchr/testify/require"
)

// TestAModelWithExternalDataServesAndTakesNewWeights serves a model whose
// weights are in model.onnx.data beside model.onnx, as exporters write
// large models: it serves, its document names the file, a new weights file
// under the same model file is served after a load (the executors load it
// again), and a load with the weights file gone is refused with the reason
// while the model goes on serving; in Triton's folder layout it serves too,
// and without a configuration file (under default_slo).
func TestAModelWithExternalDataServesAndTakesNewWeights(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo, base := cpuZooDaemon(t, "GPULETD_DEFAULT_SLO=200ms", "GPULETD_DEFAULT_MAX_BATCH_SIZE=16")
	extra := t.TempDir()
	for _, seed := range []uint64{5, 6} {
		dir := filepath.Join(extra, strconv.FormatUint(seed, 10))
		require.NoError(t, modelzoo.WriteRepository(dir, []string{"lenet5"}, seed, modelzoo.WithExternalData()))
	}
	setProfile(t, filepath.Join(extra, "5"), "lenet5", "alexnet", "200ms")
	require.NoError(t, os.Rename(filepath.Join(extra, "5", "lenet5"), filepath.Join(repo, "digits")))
	weights := filepath.Join(repo, "digits", "1", modelzoo.ExternalDataFile)

	var pixels []string
	for i := range 784 {
		pixels = append(pixels, strconv.Itoa(i%7))
	}
	input := []byte(`{"inputs":[{"name":"input","shape":[1,1,28,28],"datatype":"FP32","data":[` + strings.Join(pixels, ",") + `]}]}`)
	load := func(model string) httpResult {
		return do(t, "POST", base+"/v2/repository/models/"+model+"/load", nil, nil)
	}
	infer := func(model string) []float64 {
		t.Helper()
		r := do(t, "POST", base+"/v2/models/"+model+"/infer", input, nil)
		require.Equal(t, 200, r.code, string(r.body))
		var out struct {
			Outputs []struct {
				Data []float64 `json:"data"`
			} `json:"outputs"`
		}
		require.NoError(t, json.Unmarshal(r.body, &out))
		require.Len(t, out.Outputs, 1)
		return out.Outputs[0].Data
	}

	// Profiled first (its own file), then served.
	code, out, stderr := runCLI(t, "models", "load", "digits", "--url", base, "--wait", "2m")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	first := infer("digits")
	var doc struct {
		SHA256       string   `json:"sha256"`
		Bytes        int64    `json:"bytes"`
		ExternalData []string `json:"external_data"`
	}
	r := do(t, "GET", base+"/api/v1/models/digits", nil, nil)
	require.Equal(t, 200, r.code)
	require.NoError(t, json.Unmarshal(r.body, &doc))
	require.Equal(t, []string{modelzoo.ExternalDataFile}, doc.ExternalData)
	st, err := os.Stat(weights)
	require.NoError(t, err)
	require.Greater(t, doc.Bytes, st.Size(), "the model's size counts its weights")

	// New weights, the same model file.
	b, err := os.ReadFile(filepath.Join(extra, "6", "lenet5", "1", modelzoo.ExternalDataFile))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(weights, b, 0o644))
	r = load("digits")
	require.Equal(t, 200, r.code, string(r.body))
	second := infer("digits")
	require.NotEqual(t, first, second, "the new weights answer")
	old := doc.SHA256
	r = do(t, "GET", base+"/api/v1/models/digits", nil, nil)
	require.NoError(t, json.Unmarshal(r.body, &doc))
	require.NotEqual(t, old, doc.SHA256)

	// The weights file gone: the load says so, the model goes on serving.
	require.NoError(t, os.Remove(weights))
	r = load("digits")
	require.Equal(t, 400, r.code, string(r.body))
	require.Contains(t, string(r.body), "in model.onnx.data beside it, which is missing: copy it with the model file")
	require.Equal(t, second, infer("digits"))
	// Put back, as an operator would: the plans below may start executors
	// for digits anew, which read its files.
	require.NoError(t, os.WriteFile(weights, b, 0o644))

	// Triton's layout for a model in several files: a folder named as the
	// model file, holding model.onnx and its weights. The first file's bytes
	// again: its profile is the first one's, and so are its answers.
	again := filepath.Join(extra, "again")
	require.NoError(t, modelzoo.WriteRepository(again, []string{"lenet5"}, 5, modelzoo.WithExternalData()))
	setProfile(t, again, "lenet5", "alexnet", "200ms")
	version := filepath.Join(again, "lenet5", "1")
	require.NoError(t, os.Rename(version, version+".files"))
	require.NoError(t, os.MkdirAll(version, 0o755))
	require.NoError(t, os.Rename(version+".files", filepath.Join(version, "model.onnx")))
	require.NoError(t, os.Rename(filepath.Join(again, "lenet5"), filepath.Join(repo, "folder")))
	r = load("folder")
	require.Equal(t, 200, r.code, string(r.body))
	require.Equal(t, first, infer("folder"))

	// The same files without a configuration: served under default_slo,
	// batching up to default_max_batch_size as Triton's auto-completed
	// configuration does up to its --backend-config=default-max-batch-size.
	bare := filepath.Join(extra, "bare")
	require.NoError(t, modelzoo.WriteRepository(bare, []string{"lenet5"}, 5, modelzoo.WithExternalData()))
	require.NoError(t, os.Remove(filepath.Join(bare, "lenet5", "config.yaml")))
	require.NoError(t, os.Rename(filepath.Join(bare, "lenet5"), filepath.Join(repo, "bare")))
	r = load("bare")
	require.Equal(t, 200, r.code, string(r.body))
	require.Equal(t, first, infer("bare"))
	r = do(t, "GET", base+"/v2/models/bare/config", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Contains(t, string(r.body), `"max_batch_size":16`)
}
