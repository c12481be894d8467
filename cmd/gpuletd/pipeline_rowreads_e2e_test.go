package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo"
)

// contextPipeline is the modelzoo's detector whose objects each go, with
// the whole image they were found in, to the context classifier.
const contextPipeline = `name: "label-in-context"
platform: "ensemble"
max_batch_size: 1
input [ { name: "image", data_type: TYPE_FP32, dims: [ 64 ] } ]
output [ { name: "labels", data_type: TYPE_FP32, dims: [ -1, 10 ] } ]
parameters { key: "slo" value { string_value: "400ms" } }
parameters { key: "fanout" value { string_value: "objects" } }
ensemble_scheduling {
  step [
    { model_name: "spotter", input_map { key: "image" value: "image" }, output_map { key: "objects" value: "objects" } },
    { model_name: "context-labeler", input_map [ { key: "object" value: "objects" }, { key: "image" value: "image" } ], output_map { key: "scores" value: "labels" } }
  ]
}
`

// checkContextPipeline loads, into the daemon at base serving the
// modelzoo's pipeline from repo, the context classifier and
// contextPipeline, whose rows read the request's image whole beside their
// object, and checks its answer against ONNX Runtime's: the detector, then
// the classifier on the four objects, each with the image. objects is what
// the detector finds in image.
func checkContextPipeline(t *testing.T, base, repo string, image, objects tensor.Tensor) {
	t.Helper()
	loadPipelineFolder(t, base, repo, "label-in-context", contextPipeline, modelzoo.ContextClassifierModel)

	rows := objects
	rows.Name, rows.Shape = "object", []int64{modelzoo.PipelineObjects, 16}
	img, err := image.Float32s()
	require.NoError(t, err)
	var tiled []float32
	for range modelzoo.PipelineObjects {
		tiled = append(tiled, img...)
	}
	images, err := tensor.FromFloat32s("image", []int64{modelzoo.PipelineObjects, 64}, tiled)
	require.NoError(t, err)
	cls, err := onnxrt.Run(filepath.Join(repo, modelzoo.ContextClassifierModel, "1", "model.onnx"), map[string]tensor.Tensor{"object": rows, "image": images}, 1)
	require.NoError(t, err)
	labels := cls[0]
	labels.Name, labels.Shape = "labels", []int64{1, modelzoo.PipelineObjects, 10}

	requireSameOutputs(t, jsonOutputs(t, []tensor.Tensor{labels}), pipelineAnswer(t, base, "label-in-context", image))
	for _, name := range []string{"label-in-context", modelzoo.ContextClassifierModel} {
		r := do(t, "POST", base+"/v2/repository/models/"+name+"/unload", nil, nil)
		require.Equal(t, 200, r.code, string(r.body))
	}
}
