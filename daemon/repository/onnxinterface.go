package repository

import (
	"errors"
	"fmt"
	"os"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// errUnsupportedType is an input or output ONNX declares that the protocol
// has no data type for.
var errUnsupportedType = errors.New("unsupported input or output type")

// onnxElemTypes maps ONNX's TensorProto.DataType numbers (onnx.proto) to the
// protocol's data types: those ONNX Runtime serves here (its element types
// use the same numbers). Complex, 8-bit and 4-bit float and 4-bit integer
// types have no protocol name.
var onnxElemTypes = map[int64]tensor.DataType{
	1: tensor.FP32, 2: tensor.Uint8, 3: tensor.Int8, 4: tensor.Uint16, 5: tensor.Int16,
	6: tensor.Int32, 7: tensor.Int64, 8: tensor.Bytes, 9: tensor.Bool, 10: tensor.FP16,
	11: tensor.FP64, 12: tensor.Uint32, 13: tensor.Uint64, 16: tensor.BF16,
}

// ReadONNXInterface is the InfoReader of ONNX files: it reads the inputs and
// outputs the model's graph declares, as ONNX Runtime lists them (inputs
// that an initializer fills are left out; -1 for a symbolic or unknown
// dimension), from the file alone. It loads no weights, so a file of any
// size takes the time of one read and constant memory; whether ONNX Runtime
// can run the graph is the executors' to find (and `gpuletd models check`'s,
// which loads it).
func ReadONNXInterface(path string) (inputs, outputs []TensorSpec, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	facts, err := scanONNX(f)
	if err != nil {
		return nil, nil, err
	}
	if inputs, err = specsOf("input", facts.inputs, facts.initializers); err != nil {
		return nil, nil, err
	}
	if outputs, err = specsOf("output", facts.outputs, nil); err != nil {
		return nil, nil, err
	}
	return inputs, outputs, nil
}

// specsOf turns the graph's values into specs, leaving out those named in
// skip.
func specsOf(kind string, values []valueInfo, skip map[string]bool) ([]TensorSpec, error) {
	var out []TensorSpec
	for _, v := range values {
		if skip[v.name] {
			continue
		}
		if v.other != "" {
			return nil, fmt.Errorf("%s %q: %w: %s, not a tensor", kind, v.name, errUnsupportedType, v.other)
		}
		dt, ok := onnxElemTypes[v.elem]
		if !ok {
			return nil, fmt.Errorf("%s %q: %w: ONNX element type %d", kind, v.name, errUnsupportedType, v.elem)
		}
		dims := make([]int64, len(v.dims))
		for i, d := range v.dims {
			dims[i] = max(d, -1)
		}
		out = append(out, TensorSpec{Name: v.name, DataType: dt, Dims: dims})
	}
	return out, nil
}
