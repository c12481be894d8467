package onnxfile

import (
	"errors"
	"fmt"
	"os"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// ErrUnsupportedType is an input or output ONNX declares that the protocol
// has no data type for.
var ErrUnsupportedType = errors.New("unsupported input or output type")

// Value is one input or output of a model's graph.
type Value struct {
	Name     string
	DataType tensor.DataType
	// Shape has -1 for a symbolic or unknown dimension; empty for a scalar
	// or a value the file gives no shape.
	Shape []int64
}

// elemTypes maps ONNX's TensorProto.DataType numbers (onnx.proto) to the
// protocol's data types: those ONNX Runtime serves here (its element types
// use the same numbers). Complex, 8-bit and 4-bit float and 4-bit integer
// types have no protocol name.
var elemTypes = map[int64]tensor.DataType{
	1: tensor.FP32, 2: tensor.Uint8, 3: tensor.Int8, 4: tensor.Uint16, 5: tensor.Int16,
	6: tensor.Int32, 7: tensor.Int64, 8: tensor.Bytes, 9: tensor.Bool, 10: tensor.FP16,
	11: tensor.FP64, 12: tensor.Uint32, 13: tensor.Uint64, 16: tensor.BF16,
}

// DataTypeOf is the protocol's data type of ONNX element type elem (a
// TensorProto.DataType, which ONNX Runtime's element types number alike).
func DataTypeOf(elem int64) (tensor.DataType, bool) {
	dt, ok := elemTypes[elem]
	return dt, ok
}

// ElemTypeOf is the ONNX element type of the protocol's data type dt.
func ElemTypeOf(dt tensor.DataType) (int64, bool) {
	e, ok := elemOf[dt]
	return e, ok
}

// elemOf is elemTypes the other way (a lookup on every request's tensors).
var elemOf = func() map[tensor.DataType]int64 {
	m := make(map[tensor.DataType]int64, len(elemTypes))
	for e, dt := range elemTypes {
		m[dt] = e
	}
	return m
}()

// ReadInterface reads the inputs and outputs the ONNX model at path
// declares, as ONNX Runtime lists them: inputs an initializer fills are left
// out, -1 stands for a symbolic or unknown dimension. It loads no weights
// (it seeks past them), so whether ONNX Runtime can run the graph is not
// known from it.
func ReadInterface(path string) (inputs, outputs []Value, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	facts, err := Scan(f)
	if err != nil {
		return nil, nil, err
	}
	return facts.Interface()
}

// Interface is the graph's inputs and outputs as ReadInterface gives them.
func (f *Facts) Interface() (inputs, outputs []Value, err error) {
	if inputs, err = valuesOf("input", f.inputs, f.initializers); err != nil {
		return nil, nil, err
	}
	if outputs, err = valuesOf("output", f.outputs, nil); err != nil {
		return nil, nil, err
	}
	return inputs, outputs, nil
}

// valuesOf turns the graph's values into Values, leaving out those named
// in skip.
func valuesOf(kind string, values []valueInfo, skip map[string]bool) ([]Value, error) {
	var out []Value
	for _, v := range values {
		if skip[v.name] {
			continue
		}
		if v.other != "" {
			hint := ""
			if v.other == "a sequence" || v.other == "a map" {
				// skl2onnx's classifiers end in ZipMap unless told not to.
				hint = "; a scikit-learn classifier's probabilities come as one (ZipMap) unless it is converted with skl2onnx's option {'zipmap': False}, which gives them as a tensor"
			}
			return nil, fmt.Errorf("%s %q: %w: %s, not a tensor%s", kind, v.name, ErrUnsupportedType, v.other, hint)
		}
		dt, ok := DataTypeOf(v.elem)
		if !ok {
			return nil, fmt.Errorf("%s %q: %w: ONNX element type %d", kind, v.name, ErrUnsupportedType, v.elem)
		}
		shape := make([]int64, len(v.dims))
		for i, d := range v.dims {
			shape[i] = max(d, -1)
		}
		out = append(out, Value{Name: v.name, DataType: dt, Shape: shape})
	}
	return out, nil
}
