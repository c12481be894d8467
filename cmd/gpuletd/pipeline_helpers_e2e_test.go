package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo"
)

// loadPipelineFolder writes the modelzoo models named (Triton's layout)
// and the pipeline folder name with pbtxt into repo, then loads the models
// into the daemon at base, waiting until each serves (it is profiled
// first, 503 meanwhile), and the pipeline.
func loadPipelineFolder(t *testing.T, base, repo, name, pbtxt string, models ...string) {
	t.Helper()
	if len(models) > 0 {
		require.NoError(t, modelzoo.WriteRepository(repo, models, 5, modelzoo.AsTriton(), modelzoo.WithOverwrite()))
	}
	writePipelineFolder(t, repo, name, pbtxt)
	for _, m := range models {
		do(t, "POST", base+"/v2/repository/models/"+m+"/load", nil, nil)
		require.Eventually(t, func() bool {
			return do(t, "GET", base+"/v2/models/"+m+"/ready", nil, nil).code == 200
		}, 2*time.Minute, 200*time.Millisecond, m)
	}
	r := do(t, "POST", base+"/v2/repository/models/"+name+"/load", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
}

// writePipelineFolder writes the pipeline folder name with pbtxt (and the
// empty version folder Triton's layout has) into repo.
func writePipelineFolder(t *testing.T, repo, name, pbtxt string) {
	t.Helper()
	dir := filepath.Join(repo, name)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.pbtxt"), []byte(pbtxt), 0o644))
}

// pipelineAnswer sends image to the pipeline name of the daemon at base
// and returns the outputs it answers with.
func pipelineAnswer(t *testing.T, base, name string, image tensor.Tensor) []map[string]any {
	t.Helper()
	r := do(t, "POST", base+"/v2/models/"+name+"/infer", jsonRequest(t, []tensor.Tensor{image}), nil)
	require.Equal(t, 200, r.code, string(r.body))
	var ans struct {
		Outputs []map[string]any `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(r.body, &ans))
	return ans.Outputs
}
