package modelzoo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/gpulet/gpuletd/internal/atomicfile"
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// A pipeline to serve as a Triton ensemble: a detector-like model that finds
// a fixed number of objects in an input and describes each by a feature
// vector, and a classifier-like model that scores one object, with a
// cheaper variant of the classifier for accuracy scaling. All are random
// graphs: what they share with a real detector and classifiers is the form
// of their tensors and that the variant does less work; its accuracy (0.8
// of the classifier's) is declared for the tests, not measured.

// PipelineObjects is how many objects the detector-like model finds in
// every input: the pipeline's fan-out.
const PipelineObjects = 4

// The pipeline's models and its own name.
const (
	DetectorModel   = "spotter"
	ClassifierModel = "labeler"
	PipelineName    = "spot-and-label"
	// CrowdModel is a detector-like model whose number of objects its
	// input decides (one per 16 values), for fan-outs of many rows; not in
	// PipelineModels.
	CrowdModel = "crowd"
	// CrowdPipelineName is the pipeline of CrowdModel's objects, each
	// scored by the classifier (WriteCrowdPipeline).
	CrowdPipelineName = "crowd-and-label"
	// ContextClassifierModel is a classifier-like model that scores one
	// object in the light of the whole input it was found in, for a
	// fan-out's rows that read what was written before it; not in
	// PipelineModels.
	ContextClassifierModel = "context-labeler"
	// LiteClassifierModel is the classifier's cheaper variant, of accuracy
	// LiteAccuracy (declared, not measured).
	LiteClassifierModel = "labeler-lite"
	LiteAccuracy        = 0.8
)

var pipelineForms = []formModel{
	{
		name:        DetectorModel,
		description: fmt.Sprintf("detector-like MLP: [N,64] -> %d objects of 16 features each, [N,%d,16]", PipelineObjects, PipelineObjects),
		maxBatch:    8,
		inputs: []formTensor{
			{name: "image", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 64}, sym: BatchDim, config: []int64{64}},
		},
		outputs: []formTensor{
			{name: "objects", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, PipelineObjects, 16}, sym: BatchDim, config: []int64{PipelineObjects, 16}},
		},
		build: func(g *graph) {
			h := g.gemm("fc", "image", 64, PipelineObjects*16, true)
			g.inits = append(g.inits, int64Tensor("shape", []int64{-1, PipelineObjects, 16}))
			g.node("Reshape", "objects", []string{h, "shape"})
		},
	},
	{
		name:        CrowdModel,
		description: "detector-like model that finds as many objects as its input holds: [N,16K] -> K objects of 16 features each, [N,K,16] (Relu of the input's values in rows of 16)",
		maxBatch:    8,
		inputs: []formTensor{
			{name: "image", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, -1}, sym: BatchDim + ",L", config: []int64{-1}},
		},
		outputs: []formTensor{
			{name: "objects", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, -1, 16}, sym: BatchDim + ",K", config: []int64{-1, 16}},
		},
		profileShapes: map[string][]int64{"image": {64}},
		build: func(g *graph) {
			g.inits = append(g.inits, int64Tensor("rows", []int64{0, -1, 16}))
			g.node("Relu", "objects", []string{g.node("Reshape", "rows16", []string{"image", "rows"})})
		},
	},
	{
		name:        ClassifierModel,
		description: "classifier-like MLP 16-256-10: one object's 16 features [N,16] -> 10 class scores [N,10]",
		maxBatch:    32,
		inputs:      classifierInputs,
		outputs:     classifierOutputs,
		build: func(g *graph) {
			h := g.gemm("fc1", "object", 16, 256, true)
			g.node("Softmax", "scores", []string{g.gemm("fc2", h, 256, 10, false)}, intAttr("axis", 1))
		},
	},
	{
		name:        ContextClassifierModel,
		description: "classifier-like model of one object's 16 features [N,16] and the whole input it was found in [N,64] -> 10 class scores [N,10]",
		maxBatch:    32,
		inputs: append(slices.Clone(classifierInputs),
			formTensor{name: "image", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 64}, sym: BatchDim, config: []int64{64}}),
		outputs: classifierOutputs,
		build: func(g *graph) {
			both := g.node("Add", "both", []string{g.gemm("fc_object", "object", 16, 10, false), g.gemm("fc_image", "image", 64, 10, false)})
			g.node("Softmax", "scores", []string{both}, intAttr("axis", 1))
		},
	},
	{
		name:        LiteClassifierModel,
		description: "the classifier's cheaper variant, MLP 16-10: one object's 16 features [N,16] -> 10 class scores [N,10]",
		maxBatch:    32,
		inputs:      classifierInputs,
		outputs:     classifierOutputs,
		build: func(g *graph) {
			g.node("Softmax", "scores", []string{g.gemm("fc", "object", 16, 10, false)}, intAttr("axis", 1))
		},
		variantOf: ClassifierModel,
		accuracy:  LiteAccuracy,
	},
}

// The classifier's tensors, which its variant shares.
var (
	classifierInputs = []formTensor{
		{name: "object", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 16}, sym: BatchDim, config: []int64{16}},
	}
	classifierOutputs = []formTensor{
		{name: "scores", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 10}, sym: BatchDim, config: []int64{10}},
	}
)

// int64Tensor is an INT64 initializer named name.
func int64Tensor(name string, vals []int64) *onnxpb.TensorProto {
	return &onnxpb.TensorProto{Name: name, Dims: []int64{int64(len(vals))}, DataType: int32(onnxpb.TensorProto_INT64), Int64Data: vals}
}

// PipelineModels returns the names of the pipeline's models and the
// classifier's variant, which WriteRepository and Build take besides Names
// and FormModels.
func PipelineModels() []string { return []string{DetectorModel, ClassifierModel, LiteClassifierModel} }

// PipelinePbtxt is the config.pbtxt of the pipeline as a Triton ensemble
// with gpuletd's parameters: an SLO and the fan-out (every object the
// detector finds goes to the classifier as a request of its own).
func PipelinePbtxt(slo string) string {
	return ensemblePbtxt(PipelineName, DetectorModel, fmt.Sprintf("finds %d objects in an input", PipelineObjects),
		"64", fmt.Sprintf("%d, 16", PipelineObjects), slo)
}

// CrowdPipelinePbtxt is PipelinePbtxt for the pipeline of CrowdModel and
// the classifier, CrowdPipelineName: as many objects as the input holds.
func CrowdPipelinePbtxt(slo string) string {
	return ensemblePbtxt(CrowdPipelineName, CrowdModel, "finds one object in every 16 values of an input", "-1", "-1, 16", slo)
}

// ensemblePbtxt is the config.pbtxt of a pipeline name whose detector
// (which finds what finds says) takes an image of imageDims and writes
// objects of objectDims, each scored by the classifier, with SLO slo.
func ensemblePbtxt(name, detector, finds, imageDims, objectDims, slo string) string {
	return fmt.Sprintf(`# %s: %s %s, %s scores each one.
name: %q
platform: "ensemble"
max_batch_size: 1
input [ { name: "image", data_type: TYPE_FP32, dims: [ %s ] } ]
output [
  { name: "objects", data_type: TYPE_FP32, dims: [ %s ] },
  { name: "labels", data_type: TYPE_FP32, dims: [ -1, 10 ] }
]
parameters { key: "slo" value { string_value: %q } }
parameters { key: "fanout" value { string_value: "objects" } }
ensemble_scheduling {
  step [
    {
      model_name: %q
      model_version: -1
      input_map { key: "image" value: "image" }
      output_map { key: "objects" value: "objects" }
    },
    {
      model_name: %q
      model_version: -1
      input_map { key: "object" value: "objects" }
      output_map { key: "scores" value: "labels" }
    }
  ]
}
`, name, detector, finds, ClassifierModel, name, imageDims, objectDims, slo, detector, ClassifierModel)
}

// WritePipeline writes the pipeline's two models (config.pbtxt as Triton has
// them, without an SLO) and its ensemble folder, with SLO slo, into dir;
// withVariant adds the classifier's cheaper variant, for accuracy scaling.
func WritePipeline(dir string, seed uint64, slo string, withVariant bool) error {
	models := []string{DetectorModel, ClassifierModel}
	if withVariant {
		models = append(models, LiteClassifierModel)
	}
	return writeEnsemble(dir, seed, models, PipelineName, PipelinePbtxt(slo))
}

// WriteCrowdPipeline is WritePipeline for CrowdPipelineName: CrowdModel
// and the classifier, without a variant.
func WriteCrowdPipeline(dir string, seed uint64, slo string) error {
	return writeEnsemble(dir, seed, []string{CrowdModel, ClassifierModel}, CrowdPipelineName, CrowdPipelinePbtxt(slo))
}

// writeEnsemble writes models (config.pbtxt as Triton has them) and the
// ensemble folder name with its config.pbtxt into dir.
func writeEnsemble(dir string, seed uint64, models []string, name, pbtxt string) error {
	if err := WriteRepository(dir, models, seed, AsTriton(), WithOverwrite()); err != nil {
		return err
	}
	pdir := filepath.Join(dir, name, ModelVersion)
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return fmt.Errorf("write pipeline: %w", err)
	}
	return atomicfile.Write(filepath.Join(dir, name, "config.pbtxt"), []byte(pbtxt), 0o644)
}
