package modelzoo

import (
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// SequenceModel is a stateful model, served with Triton's sequence
// batching: each request of a sequence adds its 4 values to the sum of the
// sequence's requests before it, which the model carries as a state (ACC in,
// ACC_NEXT out), restarting from zero at a request that starts a sequence
// (the START control); it also answers with the sequence's correlation ID
// (the CORRID control). Not in Names or FormModels: its requests need
// sequence parameters.
const SequenceModel = "running-sum"

// sequenceIdle is the idle time its configuration gives a sequence, µs.
const sequenceIdle = "5000000"

var sequenceForms = []formModel{
	{
		name:        SequenceModel,
		description: "stateful model: the running sum [N,4] of a sequence's inputs [N,4], its state ACC [N,4], restarted by START [N,1]; its correlation ID CORRID [N,1] UINT64 answered as SEQUENCE",
		maxBatch:    8,
		inputs: []formTensor{
			{name: "INPUT", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 4}, sym: BatchDim, config: []int64{4}},
			{name: "START", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 1}, sym: BatchDim, filled: true},
			{name: "CORRID", elem: onnxpb.TensorProto_UINT64, dims: []int64{-1, 1}, sym: BatchDim, filled: true},
			{name: "ACC", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 4}, sym: BatchDim, filled: true},
		},
		outputs: []formTensor{
			{name: "OUTPUT", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 4}, sym: BatchDim, config: []int64{4}},
			{name: "SEQUENCE", elem: onnxpb.TensorProto_UINT64, dims: []int64{-1, 1}, sym: BatchDim, config: []int64{1}},
			{name: "ACC_NEXT", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 4}, sym: BatchDim, filled: true},
		},
		build: func(g *graph) {
			keep := g.node("Sub", "keep", []string{g.param("one", []int64{}, []float32{1}), "START"})
			g.node("Add", "OUTPUT", []string{"INPUT", g.node("Mul", "kept", []string{"ACC", keep})})
			g.node("Identity", "ACC_NEXT", []string{"OUTPUT"})
			g.node("Identity", "SEQUENCE", []string{"CORRID"})
		},
		sequence: `sequence_batching {
  max_sequence_idle_microseconds: ` + sequenceIdle + `
  control_input [
    { name: "START", control [ { kind: CONTROL_SEQUENCE_START, fp32_false_true: [ 0, 1 ] } ] },
    { name: "CORRID", control [ { kind: CONTROL_SEQUENCE_CORRID, data_type: TYPE_UINT64 } ] }
  ]
  state [ { input_name: "ACC", output_name: "ACC_NEXT", data_type: TYPE_FP32, dims: [ 4 ] } ]
}
`,
	},
}
