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

// TestPipelineResponseCache serves the modelzoo's pipeline with Triton's
// response_cache enabled in its config.pbtxt: a repeated request is
// answered from the cache with the same answer and runs no step, which the
// pipeline's statistics, the steps' and the admin status show; once a step's
// model is loaded again, the pipeline's old answer is not given again.
func TestPipelineResponseCache(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the binary")
	}
	repo := filepath.Join(t.TempDir(), "models")
	require.NoError(t, modelzoo.WritePipeline(repo, 5, "400ms", false))
	cfg := filepath.Join(repo, modelzoo.PipelineName, "config.pbtxt")
	b, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, append(b, "response_cache { enable: true }\n"...), 0o644))
	addr, logs := startDaemon(t, daemonEnv(t, "GPULETD_MODEL_REPOSITORY="+repo, "GPULETD_DEVICES=cpu", "GPULETD_DEFAULT_SLO=200ms",
		"GPULETD_RESPONSE_CACHE_SIZE=1048576"))
	base := "http://" + addr
	url := base + "/v2/models/" + modelzoo.PipelineName
	ready := func() bool { return do(t, "GET", url+"/ready", nil, nil).code == 200 }
	require.Eventually(t, ready, 2*time.Minute, 200*time.Millisecond, "logs:\n%s", logs)

	in := make([]float32, 64)
	for i := range in {
		in[i] = float32(i%7) / 7
	}
	image, err := tensor.FromFloat32s("image", []int64{1, 64}, in)
	require.NoError(t, err)
	body := jsonRequest(t, []tensor.Tensor{image})
	answer := func() []map[string]any {
		t.Helper()
		r := do(t, "POST", url+"/infer", body, nil)
		require.Equal(t, 200, r.code, string(r.body))
		var ans struct {
			Outputs []map[string]any `json:"outputs"`
		}
		require.NoError(t, json.Unmarshal(r.body, &ans))
		return ans.Outputs
	}
	first := answer()
	requireSameOutputs(t, first, answer())
	requirePipelineCache(t, base, 1, 1, 1)

	var st struct {
		Pipelines []struct {
			Cache *struct {
				Hits   int64 `json:"hits"`
				Misses int64 `json:"misses"`
			} `json:"response_cache"`
		} `json:"pipelines"`
	}
	r := do(t, "GET", base+"/api/v1/status", nil, nil)
	require.Equal(t, 200, r.code)
	require.NoError(t, json.Unmarshal(r.body, &st))
	require.Len(t, st.Pipelines, 1)
	require.NotNil(t, st.Pipelines[0].Cache, string(r.body))
	require.Equal(t, int64(1), st.Pipelines[0].Cache.Hits)
	r = do(t, "GET", url+"/config", nil, nil)
	require.Contains(t, string(r.body), `"response_cache":{"enable":true}`)

	// gpuletd models show takes a pipeline too: its steps, SLO, accuracy
	// and cache, and its tensors.
	code, out, stderr := runCLI(t, "models", "show", modelzoo.PipelineName, "--url", base)
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{"pipeline  " + modelzoo.PipelineName, "steps     " + modelzoo.DetectorModel + " -> " + modelzoo.ClassifierModel,
		"slo       400ms", "ready     yes", "cache     1 hits, 1 misses", "input   image", "output  labels"} {
		require.Contains(t, out, want)
	}

	// The detector loaded again: the answer its old load gave goes.
	r = do(t, "POST", base+"/v2/repository/models/"+modelzoo.DetectorModel+"/load", nil, nil)
	require.Contains(t, []int{200, 503}, r.code, string(r.body))
	require.Eventually(t, ready, time.Minute, 200*time.Millisecond, "logs:\n%s", logs)
	requireSameOutputs(t, first, answer())
	requirePipelineCache(t, base, 1, 2, 2)
}

// requirePipelineCache checks the pipeline's response-cache statistics and
// how many requests its first step's model ran.
func requirePipelineCache(t *testing.T, base string, hits, misses, detectorRuns int64) {
	t.Helper()
	p := statsOf(t, base, modelzoo.PipelineName)
	require.Equal(t, hits, p.InferenceStats["cache_hit"].Count)
	require.Equal(t, misses, p.InferenceStats["cache_miss"].Count)
	require.Equal(t, misses, p.InferenceCount, "the misses ran; a hit is no inference, as in Triton")
	require.Equal(t, detectorRuns, statsOf(t, base, modelzoo.DetectorModel).InferenceCount, "only misses ran the steps")
}
