package modelzoo

import (
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// graph accumulates the nodes and initializers of one model while a builder
// walks its layers; every weight comes from the graph's random source in the
// order the layers are added, so a seed fixes the whole file.
type graph struct {
	w     *weights
	nodes []*onnxpb.NodeProto
	inits []*onnxpb.TensorProto
}

func newGraph(w *weights) *graph {
	return &graph{w: w}
}

// node appends an operator whose node name and single output value are both
// name, and returns the output value's name.
func (g *graph) node(op, name string, inputs []string, attrs ...*onnxpb.AttributeProto) string {
	g.nodes = append(g.nodes, &onnxpb.NodeProto{
		Name:      name,
		OpType:    op,
		Input:     inputs,
		Output:    []string{name},
		Attribute: attrs,
	})
	return name
}

// param adds an FP32 initializer and returns its name.
func (g *graph) param(name string, dims []int64, values []float32) string {
	g.inits = append(g.inits, floatTensor(name, dims, values))
	return name
}

// conv adds a 2-D convolution with He-scaled weights [cout,cin,k,k]. With
// bias false it has no bias input (a BatchNormalization follows).
func (g *graph) conv(name, x string, cin, cout, k, stride, pad int, bias bool) string {
	fanIn := cin * k * k
	inputs := []string{x, g.param(name+".weight", []int64{int64(cout), int64(cin), int64(k), int64(k)}, g.w.he(cout*fanIn, fanIn))}
	if bias {
		inputs = append(inputs, g.param(name+".bias", []int64{int64(cout)}, g.w.bias(cout)))
	}
	return g.node("Conv", name, inputs,
		intsAttr("kernel_shape", k, k),
		intsAttr("strides", stride, stride),
		intsAttr("pads", pad, pad, pad, pad),
	)
}

// batchNorm adds an inference-mode BatchNormalization over c channels.
// Running statistics are near 0 and 1 and the scale is drawn around gain, so
// the layer changes the values without blowing them up.
func (g *graph) batchNorm(name, x string, c int, gain float64) string {
	scale, shift, mean, variance := g.w.batchNorm(c, gain)
	dims := []int64{int64(c)}
	return g.node("BatchNormalization", name, []string{
		x,
		g.param(name+".scale", dims, scale),
		g.param(name+".bias", dims, shift),
		g.param(name+".mean", dims, mean),
		g.param(name+".var", dims, variance),
	}, floatAttr("epsilon", 1e-5))
}

// gemm adds a fully connected layer y = x·Wᵀ + b on [N,in] with W stored as
// [out,in]. relu says whether a Relu follows, which picks He (relu) or
// Glorot (linear output) scaling.
func (g *graph) gemm(name, x string, in, out int, relu bool) string {
	var w []float32
	if relu {
		w = g.w.he(out*in, in)
	} else {
		w = g.w.glorot(out*in, in, out)
	}
	return g.node("Gemm", name, []string{
		x,
		g.param(name+".weight", []int64{int64(out), int64(in)}, w),
		g.param(name+".bias", []int64{int64(out)}, g.w.bias(out)),
	}, intAttr("transB", 1))
}

func (g *graph) relu(name, x string) string {
	return g.node("Relu", name, []string{x})
}

func (g *graph) maxPool(name, x string, k, stride, pad int) string {
	return g.node("MaxPool", name, []string{x},
		intsAttr("kernel_shape", k, k),
		intsAttr("strides", stride, stride),
		intsAttr("pads", pad, pad, pad, pad),
	)
}

func (g *graph) add(name, a, b string) string {
	return g.node("Add", name, []string{a, b})
}

func (g *graph) globalAveragePool(name, x string) string {
	return g.node("GlobalAveragePool", name, []string{x})
}

// flatten reshapes [N,…] to [N,rest].
func (g *graph) flatten(name, x string) string {
	return g.node("Flatten", name, []string{x}, intAttr("axis", 1))
}

func intAttr(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: name, Type: onnxpb.AttributeProto_INT, I: v}
}

func intsAttr(name string, vs ...int) *onnxpb.AttributeProto {
	ints := make([]int64, len(vs))
	for i, v := range vs {
		ints[i] = int64(v)
	}
	return &onnxpb.AttributeProto{Name: name, Type: onnxpb.AttributeProto_INTS, Ints: ints}
}

func floatAttr(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: name, Type: onnxpb.AttributeProto_FLOAT, F: v}
}
