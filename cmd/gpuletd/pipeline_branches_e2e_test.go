package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo"
)

// branchesPipeline is a Triton ensemble whose steps are not written in an
// order they run in and whose first two run at once: the classifier, on
// every object the detector finds, is written first; the crowd model reads
// the request's image beside the detector.
const branchesPipeline = `name: "spot-beside-crowd"
platform: "ensemble"
max_batch_size: 1
input [ { name: "image", data_type: TYPE_FP32, dims: [ 64 ] } ]
output [
  { name: "labels", data_type: TYPE_FP32, dims: [ -1, 10 ] },
  { name: "crowd_objects", data_type: TYPE_FP32, dims: [ -1, 16 ] }
]
parameters { key: "slo" value { string_value: "400ms" } }
parameters { key: "fanout" value { string_value: "objects" } }
ensemble_scheduling {
  step [
    { model_name: "labeler", input_map { key: "object" value: "objects" }, output_map { key: "scores" value: "labels" } },
    { model_name: "crowd", input_map { key: "image" value: "image" }, output_map { key: "objects" value: "crowd_objects" } },
    { model_name: "spotter", input_map { key: "image" value: "image" }, output_map { key: "objects" value: "objects" } }
  ]
}
`

// checkBranchingPipeline loads, into the daemon at base serving the
// modelzoo's pipeline from repo, the crowd model and branchesPipeline,
// Triton's way, and checks that the pipeline serves: its answer is the
// three models' own, run in an order they can run in, and its status lists
// its steps in that order. image is the request's input, labels what the
// classifier gives for the detector's objects in it.
func checkBranchingPipeline(t *testing.T, base, repo string, image, labels tensor.Tensor) {
	t.Helper()
	loadPipelineFolder(t, base, repo, "spot-beside-crowd", branchesPipeline, modelzoo.CrowdModel)

	crowd, err := onnxrt.Run(filepath.Join(repo, modelzoo.CrowdModel, "1", "model.onnx"), map[string]tensor.Tensor{"image": image}, 1)
	require.NoError(t, err)
	crowdObjects := crowd[0]
	crowdObjects.Name = "crowd_objects"
	labels.Name = "labels"
	want := jsonOutputs(t, []tensor.Tensor{labels, crowdObjects})

	requireSameOutputs(t, want, pipelineAnswer(t, base, "spot-beside-crowd", image))

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
	var steps []string
	for _, p := range st.Pipelines {
		if p.Name == "spot-beside-crowd" {
			require.True(t, p.Ready)
			steps = p.Steps
		}
	}
	require.Equal(t, []string{modelzoo.CrowdModel, modelzoo.DetectorModel, modelzoo.ClassifierModel}, steps, "in an order they run in")

	// Its configuration gives its steps as written, as Triton's does.
	r = do(t, "GET", base+"/v2/models/spot-beside-crowd/config", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
	var cfg struct {
		Scheduling struct {
			Step []struct {
				Model   string            `json:"model_name"`
				Version int64             `json:"model_version"`
				Inputs  map[string]string `json:"input_map"`
			} `json:"step"`
		} `json:"ensemble_scheduling"`
		Parameters map[string]map[string]string `json:"parameters"`
	}
	require.NoError(t, json.Unmarshal(r.body, &cfg))
	require.Len(t, cfg.Scheduling.Step, 3, string(r.body))
	require.Equal(t, modelzoo.ClassifierModel, cfg.Scheduling.Step[0].Model)
	require.Equal(t, map[string]string{"object": "objects"}, cfg.Scheduling.Step[0].Inputs)
	require.Equal(t, int64(-1), cfg.Scheduling.Step[2].Version)
	require.Equal(t, "objects", cfg.Parameters["fanout"]["string_value"])

	r = do(t, "POST", base+"/v2/repository/models/spot-beside-crowd/unload", nil, nil)
	require.Equal(t, 200, r.code, string(r.body))
}
