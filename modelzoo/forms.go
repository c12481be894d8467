package modelzoo

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// formModel is a small model whose tensors take the forms a Triton
// repository holds beyond one FP32 batch: several inputs and outputs,
// scalars, no batch dimension, a dynamic dimension that is not first, FP16,
// BF16, INT64 and strings. Its config.pbtxt is written out in full, as a
// Triton user would have it.
type formModel struct {
	name        string
	description string
	maxBatch    int
	inputs      []formTensor
	outputs     []formTensor
	build       func(g *graph)
	// profileShapes, when set, is the configuration's profile_shapes: the
	// sizes of dynamic dimensions requests bring.
	profileShapes map[string][]int64
	// variantOf and accuracy, when set, declare the model a cheaper variant
	// of another in a pipeline's step (config parameters variant_of and
	// accuracy).
	variantOf string
	accuracy  float64
	// sequence, when set, is the model's sequence_batching block: a
	// stateful model, written as a config.pbtxt alone.
	sequence string
	// opDomain, when set, is the domain of a custom operator the graph
	// uses (one more operator set it imports), and operations the
	// config.pbtxt's model_operations block naming the library that
	// registers it: written as a config.pbtxt alone.
	opDomain   string
	operations string
}

// pbtxtOnly reports whether the form model's configuration has a block
// only a config.pbtxt can give (sequence_batching, model_operations): it
// is written as a config.pbtxt alone, with its SLO among the parameters.
func (f formModel) pbtxtOnly() bool { return f.sequence != "" || f.operations != "" }

// formTensor is one input or output of a form model: its ONNX type and
// dims (-1: a symbolic dimension named sym) and the dims and reshape its
// config.pbtxt gives (nil reshape: none).
type formTensor struct {
	name    string
	elem    onnxpb.TensorProto_DataType
	dims    []int64
	sym     string
	config  []int64
	reshape []int64
	// filled: a stateful model's control or state tensor, which the server
	// fills; the configuration's input and output leave it out.
	filled bool
}

// formSLO is the SLO written to config.yaml for the form models: each runs
// in well under a millisecond on one CPU core, so 20 ms leaves room for a
// loaded machine.
const formSLO = 20 * time.Millisecond

var forms = []formModel{
	{
		name: "vad",
		description: "voice-activity-like model that does not batch: audio [1,T] with T any length, " +
			"a state [2,1,16] and a scalar INT64 sample rate -> a score [1,1] and the next state",
		inputs: []formTensor{
			{name: "input", elem: onnxpb.TensorProto_FLOAT, dims: []int64{1, -1}, sym: "T", config: []int64{1, -1}},
			{name: "state", elem: onnxpb.TensorProto_FLOAT, dims: []int64{2, 1, 16}, config: []int64{2, 1, 16}},
			// A scalar in the file, [1] in the configuration: Triton's reshape.
			{name: "sr", elem: onnxpb.TensorProto_INT64, dims: []int64{}, config: []int64{1}, reshape: []int64{}},
		},
		outputs: []formTensor{
			{name: "output", elem: onnxpb.TensorProto_FLOAT, dims: []int64{1, 1}, config: []int64{1, 1}},
			{name: "stateN", elem: onnxpb.TensorProto_FLOAT, dims: []int64{2, 1, 16}, config: []int64{2, 1, 16}},
		},
		build: func(g *graph) {
			mean := g.node("ReduceMean", "mean", []string{"input"}, intsAttr("axes", 1), intAttr("keepdims", 1))
			rate := g.node("Cast", "rate", []string{"sr"}, intAttr("to", int64(onnxpb.TensorProto_FLOAT)))
			scaled := g.node("Div", "scaled", []string{rate, g.param("khz16", []int64{}, []float32{16000})})
			s := g.node("Mul", "s", []string{mean, scaled})
			state := g.node("Mul", "weighted", []string{"state", g.param("w", []int64{16}, g.w.normal(16, 0.5))})
			pooled := g.node("ReduceMean", "pooled", []string{state}, intAttr("keepdims", 0))
			g.node("Sigmoid", "output", []string{g.node("Add", "z", []string{s, pooled})})
			g.node("Tanh", "stateN", []string{g.node("Add", "next", []string{state, s})})
		},
	},
	{
		name:        "mlp16",
		description: "FP16 MLP 16-4 with Tanh, [N,16] FP16 -> [N,4] FP16 and the same as BF16",
		maxBatch:    8,
		inputs: []formTensor{
			{name: "input", elem: onnxpb.TensorProto_FLOAT16, dims: []int64{-1, 16}, sym: BatchDim, config: []int64{16}},
		},
		outputs: []formTensor{
			{name: "output", elem: onnxpb.TensorProto_FLOAT16, dims: []int64{-1, 4}, sym: BatchDim, config: []int64{4}},
			{name: "output_bf16", elem: onnxpb.TensorProto_BFLOAT16, dims: []int64{-1, 4}, sym: BatchDim, config: []int64{4}},
		},
		build: func(g *graph) {
			x := g.node("Cast", "x", []string{"input"}, intAttr("to", int64(onnxpb.TensorProto_FLOAT)))
			y := g.node("Tanh", "y", []string{g.gemm("fc", x, 16, 4, false)})
			g.node("Cast", "output", []string{y}, intAttr("to", int64(onnxpb.TensorProto_FLOAT16)))
			g.node("Cast", "output_bf16", []string{y}, intAttr("to", int64(onnxpb.TensorProto_BFLOAT16)))
		},
	},
	{
		name: "tokens",
		description: "text-like model that batches: token ids [N,T] INT64 with T any length (profiled at 32) -> " +
			"their embeddings [N,T,4] and the mean embedding [N,4]",
		maxBatch: 8,
		inputs: []formTensor{
			{name: "ids", elem: onnxpb.TensorProto_INT64, dims: []int64{-1, -1}, sym: BatchDim + ",T", config: []int64{-1}},
		},
		outputs: []formTensor{
			{name: "embedded", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, -1, 4}, sym: BatchDim + ",T", config: []int64{-1, 4}},
			{name: "pooled", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 4}, sym: BatchDim, config: []int64{4}},
		},
		profileShapes: map[string][]int64{"ids": {32}},
		build: func(g *graph) {
			// Ids index a vocabulary of 16: the load generator's integers
			// are below 10, the profiler's zero.
			emb := g.param("emb", []int64{16, 4}, g.w.normal(64, 0.5))
			g.node("Gather", "embedded", []string{emb, "ids"}, intAttr("axis", 0))
			g.node("ReduceMean", "pooled", []string{"embedded"}, intsAttr("axes", 1), intAttr("keepdims", 0))
		},
	},
	{
		name: "frames",
		description: "image model that batches: frames [N,3,H,W] FP32 of any height and width (profiled at 32x32; " +
			"its 5x5 convolution runs on no image under 5x5) -> 4 features [N,4]",
		maxBatch: 8,
		inputs: []formTensor{
			{name: "frames", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 3, -1, -1}, sym: BatchDim + ",H,W", config: []int64{3, -1, -1}},
		},
		outputs: []formTensor{
			{name: "features", elem: onnxpb.TensorProto_FLOAT, dims: []int64{-1, 4}, sym: BatchDim, config: []int64{4}},
		},
		profileShapes: map[string][]int64{"frames": {3, 32, 32}},
		build: func(g *graph) {
			c := g.relu("relu", g.conv("conv", "frames", 3, 4, 5, 1, 0, true))
			g.flatten("features", g.globalAveragePool("gap", c))
		},
	},
	{
		name:        "words",
		description: "string model that does not batch: words [L] -> the words upper-cased [L] and their count, a scalar INT64",
		inputs: []formTensor{
			{name: "text", elem: onnxpb.TensorProto_STRING, dims: []int64{-1}, sym: "L", config: []int64{-1}},
		},
		outputs: []formTensor{
			{name: "upper", elem: onnxpb.TensorProto_STRING, dims: []int64{-1}, sym: "L", config: []int64{-1}},
			{name: "count", elem: onnxpb.TensorProto_INT64, dims: []int64{}, config: []int64{1}, reshape: []int64{}},
		},
		build: func(g *graph) {
			// The C locale is on every host; its case mapping is ASCII only.
			g.node("StringNormalizer", "upper", []string{"text"},
				&onnxpb.AttributeProto{Name: "case_change_action", Type: onnxpb.AttributeProto_STRING, S: []byte("UPPER")},
				&onnxpb.AttributeProto{Name: "locale", Type: onnxpb.AttributeProto_STRING, S: []byte("C")})
			g.node("Size", "count", []string{"text"})
		},
	},
}

// FormModels returns the names of the models with other tensor forms (see
// formModel), which WriteRepository and Build take besides Names.
func FormModels() []string {
	names := make([]string, len(forms))
	for i, f := range forms {
		names[i] = f.name
	}
	return names
}

func lookupForm(name string) (formModel, bool) {
	for _, list := range [][]formModel{forms, pipelineForms, sequenceForms, customOpForms} {
		if i := slices.IndexFunc(list, func(f formModel) bool { return f.name == name }); i >= 0 {
			return list[i], true
		}
	}
	return formModel{}, false
}

// model returns the form model's ONNX graph, weights drawn from seed.
func (f formModel) model(seed uint64) *onnxpb.ModelProto {
	g := newGraph(newWeights(f.name, seed))
	f.build(g)
	info := func(ts []formTensor) []*onnxpb.ValueInfoProto {
		out := make([]*onnxpb.ValueInfoProto, len(ts))
		for i, t := range ts {
			out[i] = valueInfo(t.name, t.elem, t.dims, t.sym)
		}
		return out
	}
	m := modelProto(f.name, f.description, seed, &onnxpb.GraphProto{
		Name: f.name, Node: g.nodes, Initializer: g.inits,
		Input: info(f.inputs), Output: info(f.outputs),
	})
	if f.opDomain != "" {
		m.OpsetImport = append(m.OpsetImport, &onnxpb.OperatorSetIdProto{Domain: f.opDomain, Version: 1})
	}
	return m
}

// configYAML is the form model's config.yaml: shapes come from the file.
func (f formModel) configYAML(seed uint64) string {
	y := fmt.Sprintf("# %s: %s; weights are random (modelzoo seed %d).\nslo: %s\nmax_batch_size: %d\nprofile: alexnet\n",
		f.name, f.description, seed, formSLO, f.maxBatch)
	if f.variantOf != "" {
		y += fmt.Sprintf("variant_of: %s\naccuracy: %g\n", f.variantOf, f.accuracy)
	}
	if len(f.profileShapes) > 0 {
		y += "profile_shapes:\n"
		for _, name := range slices.Sorted(maps.Keys(f.profileShapes)) {
			y += fmt.Sprintf("  %s: %v\n", name, strings.ReplaceAll(fmt.Sprint(f.profileShapes[name]), " ", ", "))
		}
	}
	return y
}

// configPbtxt is the config.pbtxt Triton would have for the form model,
// without an SLO.
func (f formModel) configPbtxt(seed uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s; weights are random (modelzoo seed %d).\n", f.name, f.description, seed)
	fmt.Fprintf(&b, "name: %q\nplatform: \"onnxruntime_onnx\"\nmax_batch_size: %d\n", f.name, f.maxBatch)
	list := func(kind string, all []formTensor) {
		ts := slices.DeleteFunc(slices.Clone(all), func(t formTensor) bool { return t.filled })
		fmt.Fprintf(&b, "%s [\n", kind)
		for i, t := range ts {
			fmt.Fprintf(&b, "  {\n    name: %q\n    data_type: %s\n    dims: [%s]\n", t.name, tritonTypeName(t.elem), padDims(t.config))
			if t.reshape != nil {
				fmt.Fprintf(&b, "    reshape: { shape: [%s] }\n", padDims(t.reshape))
			}
			b.WriteString("  }")
			if i < len(ts)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("]\n")
	}
	list("input", f.inputs)
	list("output", f.outputs)
	switch {
	case f.sequence != "":
		b.WriteString(f.sequence)
	case f.maxBatch > 0:
		b.WriteString("dynamic_batching { }\n")
	}
	b.WriteString(f.operations)
	if f.pbtxtOnly() { // config.yaml cannot give these blocks, so the SLO is here
		fmt.Fprintf(&b, "parameters { key: \"slo\" value { string_value: %q } }\n", formSLO.String())
	}
	b.WriteString("instance_group [ { count: 1, kind: KIND_GPU } ]\n")
	if len(f.profileShapes) > 0 {
		fmt.Fprintf(&b, "parameters { key: \"profile_shapes\" value { string_value: %q } }\n", tensor.FormatShapes(f.profileShapes))
	}
	if f.variantOf != "" {
		fmt.Fprintf(&b, "parameters { key: \"variant_of\" value { string_value: %q } }\n", f.variantOf)
		fmt.Fprintf(&b, "parameters { key: \"accuracy\" value { string_value: \"%g\" } }\n", f.accuracy)
	}
	return b.String()
}

// padDims formats dims for a list in config.pbtxt: " 1, 2 " or " ".
func padDims(dims []int64) string {
	if len(dims) == 0 {
		return " "
	}
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = strconv.FormatInt(d, 10)
	}
	return " " + strings.Join(s, ", ") + " "
}

// tritonTypeName is the TYPE_* name of an ONNX element type (those the form
// models use).
func tritonTypeName(e onnxpb.TensorProto_DataType) string {
	switch e {
	case onnxpb.TensorProto_FLOAT:
		return "TYPE_FP32"
	case onnxpb.TensorProto_FLOAT16:
		return "TYPE_FP16"
	case onnxpb.TensorProto_BFLOAT16:
		return "TYPE_BF16"
	case onnxpb.TensorProto_INT64:
		return "TYPE_INT64"
	case onnxpb.TensorProto_UINT64:
		return "TYPE_UINT64"
	case onnxpb.TensorProto_STRING:
		return "TYPE_STRING"
	}
	panic(fmt.Sprintf("modelzoo: no Triton type name for %s", e))
}
