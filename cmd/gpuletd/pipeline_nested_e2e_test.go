package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo"
)

// spotPipeline is a pipeline of the detector alone, to be a step of
// nestedPipeline (DETECTOR: the model it runs).
const spotPipeline = `name: "spot"
platform: "ensemble"
max_batch_size: 1
input [ { name: "image", data_type: TYPE_FP32, dims: [ 64 ] } ]
output [ { name: "found", data_type: TYPE_FP32, dims: [ -1, 16 ] } ]
parameters { key: "slo" value { string_value: "100ms" } }
ensemble_scheduling {
  step [ { model_name: "DETECTOR", input_map { key: "image" value: "image" }, output_map { key: "objects" value: "found" } } ]
}
`

// nestedPipeline is the modelzoo's pipeline with its detector step written
// as the pipeline spot (Triton's nested ensembles).
const nestedPipeline = `name: "spot-then-label"
platform: "ensemble"
max_batch_size: 1
input [ { name: "image", data_type: TYPE_FP32, dims: [ 64 ] } ]
output [
  { name: "objects", data_type: TYPE_FP32, dims: [ -1, 16 ] },
  { name: "labels", data_type: TYPE_FP32, dims: [ -1, 10 ] }
]
parameters { key: "slo" value { string_value: "400ms" } }
parameters { key: "fanout" value { string_value: "objects" } }
ensemble_scheduling {
  step [
    { model_name: "spot", input_map { key: "image" value: "image" }, output_map { key: "found" value: "objects" } },
    { model_name: "labeler", input_map { key: "object" value: "objects" }, output_map { key: "scores" value: "labels" } }
  ]
}
`

// scenePipeline runs the modelzoo's pipeline, fan-out and all, beside the
// crowd model on the same image.
const scenePipeline = `name: "scene"
platform: "ensemble"
max_batch_size: 1
input [ { name: "image", data_type: TYPE_FP32, dims: [ 64 ] } ]
output [
  { name: "objects", data_type: TYPE_FP32, dims: [ -1, 16 ] },
  { name: "labels", data_type: TYPE_FP32, dims: [ -1, 10 ] },
  { name: "crowd_objects", data_type: TYPE_FP32, dims: [ -1, 16 ] }
]
parameters { key: "slo" value { string_value: "400ms" } }
ensemble_scheduling {
  step [
    { model_name: "spot-and-label", input_map { key: "image" value: "image" }, output_map [ { key: "objects" value: "objects" }, { key: "labels" value: "labels" } ] },
    { model_name: "crowd", input_map { key: "image" value: "image" }, output_map { key: "objects" value: "crowd_objects" } }
  ]
}
`

// checkNestedPipeline loads, into the daemon at base serving the
// modelzoo's pipeline and the crowd model from repo, nestedPipeline and
// checks that it answers as the modelzoo's pipeline does (want, for
// image), lists the detector and classifier as its steps, reads its
// configuration back as written, and is loaded again when spot is.
func checkNestedPipeline(t *testing.T, base, repo string, image tensor.Tensor, want []map[string]any) {
	t.Helper()
	writePipelineFolder(t, repo, "spot", strings.Replace(spotPipeline, "DETECTOR", modelzoo.DetectorModel, 1))
	loadPipelineFolder(t, base, repo, "spot-then-label", nestedPipeline)
	requireSameOutputs(t, want, pipelineAnswer(t, base, "spot-then-label", image))

	require.Equal(t, []string{modelzoo.DetectorModel, modelzoo.ClassifierModel}, nestedSteps(t, base), "the nested pipeline's model runs in its place")
	code, out, stderr := runCLI(t, "models", "show", "spot-then-label", "--url", base)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "note      ensemble_scheduling.step[0] runs the pipeline spot: its step runs")

	r := do(t, "GET", base+"/v2/models/spot-then-label/config", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	var cfg struct {
		Scheduling struct {
			Step []struct {
				Model   string            `json:"model_name"`
				Outputs map[string]string `json:"output_map"`
			} `json:"step"`
		} `json:"ensemble_scheduling"`
	}
	require.NoError(t, json.Unmarshal(r.body, &cfg))
	require.Len(t, cfg.Scheduling.Step, 2, string(r.body))
	require.Equal(t, "spot", cfg.Scheduling.Step[0].Model, "as written")
	require.Equal(t, map[string]string{"found": "objects"}, cfg.Scheduling.Step[0].Outputs)

	// spot changed to run the crowd model, and loaded again: the pipeline
	// that runs its steps is loaded again with it, and runs the crowd model.
	writePipelineFolder(t, repo, "spot", strings.Replace(spotPipeline, "DETECTOR", modelzoo.CrowdModel, 1))
	r = do(t, "POST", base+"/v2/repository/models/spot/load", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Contains(t, eventMessages(t, base), "spot-then-label runs the steps of the pipeline spot, loaded anew: loading it again")
	require.Equal(t, []string{modelzoo.CrowdModel, modelzoo.ClassifierModel}, nestedSteps(t, base))
	pipelineAnswer(t, base, "spot-then-label", image)

	// The modelzoo's pipeline, fan-out and all, as a step beside the crowd
	// model: its fan-out is the outer pipeline's.
	loadPipelineFolder(t, base, repo, "scene", scenePipeline)
	crowd, err := onnxrt.Run(filepath.Join(repo, modelzoo.CrowdModel, "1", "model.onnx"), map[string]tensor.Tensor{"image": image}, 1)
	require.NoError(t, err)
	crowd[0].Name = "crowd_objects"
	requireSameOutputs(t, append(slices.Clone(want), jsonOutputs(t, crowd)...), pipelineAnswer(t, base, "scene", image))
	r = do(t, "POST", base+"/v2/repository/models/scene/unload", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))

	// Unloaded with its dependents, it takes the pipeline whose steps it
	// runs with it, as Triton unloads a nested ensemble's.
	r = do(t, "POST", base+"/v2/repository/models/spot-then-label/unload", []byte(`{"parameters":{"unload_dependents":true}}`), nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Contains(t, eventMessages(t, base), "model unloaded with its pipeline spot-then-label")
	for _, gone := range []string{"spot-then-label", "spot", modelzoo.CrowdModel, modelzoo.ClassifierModel} {
		require.Equal(t, 404, do(t, "GET", base+"/v2/models/"+gone, nil, nil).code, gone)
	}
	// The classifier back for the modelzoo's pipeline.
	r = do(t, "POST", base+"/v2/repository/models/"+modelzoo.ClassifierModel+"/load", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	require.Eventually(t, func() bool {
		return do(t, "GET", base+"/v2/models/"+modelzoo.PipelineName+"/ready", nil, nil).code == 200
	}, time.Minute, 100*time.Millisecond)
}

// nestedSteps is the steps of nestedPipeline in the status of the daemon
// at base, and checks it is ready.
func nestedSteps(t *testing.T, base string) []string {
	t.Helper()
	r := do(t, "GET", base+"/api/v1/status", nil, nil)
	require.Equal(t, 200, r.code)
	var st struct {
		Pipelines []struct {
			Name  string   `json:"name"`
			Steps []string `json:"steps"`
			Ready bool     `json:"ready"`
		} `json:"pipelines"`
	}
	require.NoError(t, json.Unmarshal(r.body, &st))
	for _, p := range st.Pipelines {
		if p.Name == "spot-then-label" {
			require.True(t, p.Ready)
			return p.Steps
		}
	}
	t.Fatalf("spot-then-label is not in the status: %s", r.body)
	return nil
}
