package modelzoo

import (
	"fmt"

	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// CustomOpModel is a model whose graph uses an operator of no standard set:
// CustomOpName of the domain CustomOpDomain, which a custom operator library
// registers with ONNX Runtime (internal/customop builds one for tests). Its
// output [N,4] is its input [N,4] plus one. Its config.pbtxt names the
// library CustomOpLibrary, in the model folder (Triton's model_operations),
// which WriteRepository does not write: not in Names or FormModels.
const CustomOpModel = "add-one"

// The custom operator CustomOpModel's graph uses, and the library file its
// configuration names.
const (
	CustomOpDomain  = "gpuletd.test"
	CustomOpName    = "AddOne"
	CustomOpLibrary = "libaddone.so"
)

var customOpForms = []formModel{
	{
		name:        CustomOpModel,
		description: "custom operator model: its input [N,4] plus one, by the operator " + CustomOpDomain + ":" + CustomOpName + " of a library of its own",
		maxBatch:    8,
		inputs:      []formTensor{{name: "INPUT", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 4}, sym: BatchDim, config: []int64{4}}},
		outputs:     []formTensor{{name: "OUTPUT", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 4}, sym: BatchDim, config: []int64{4}}},
		build: func(g *graph) {
			g.node(CustomOpName, "OUTPUT", []string{"INPUT"})
			g.nodes[len(g.nodes)-1].Domain = CustomOpDomain
		},
		opDomain:   CustomOpDomain,
		operations: fmt.Sprintf("model_operations { op_library_filename: [ %q ] }\n", CustomOpLibrary),
	},
}
