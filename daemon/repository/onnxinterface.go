package repository

import "github.com/gpulet/gpuletd/internal/onnxfile"

// ReadONNXInterface is the InfoReader of ONNX files: the inputs and outputs
// the model's graph declares (onnxfile.ReadInterface), read from the file
// alone. It loads no weights, so a file of any size takes constant memory
// and less than one read; whether ONNX Runtime can run the graph is the
// executors' to find (and `gpuletd models check`'s, which loads it).
func ReadONNXInterface(path string) (inputs, outputs []TensorSpec, err error) {
	ins, outs, err := onnxfile.ReadInterface(path)
	if err != nil {
		return nil, nil, err
	}
	return Specs(ins), Specs(outs), nil
}

// Specs are a model file's inputs or outputs, as either ONNX reader gives
// them (onnxfile's, or ONNX Runtime's through onnxrt, which answers in the
// same type), as the repository's specs.
func Specs(values []onnxfile.Value) []TensorSpec {
	out := make([]TensorSpec, len(values))
	for i, v := range values {
		out[i] = TensorSpec{Name: v.Name, DataType: v.DataType, Dims: v.Shape}
	}
	return out
}
