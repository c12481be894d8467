package onnxrt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/gpulet/gpuletd/internal/onnxfile"
	ort "github.com/yalue/onnxruntime_go"
)

var (
	// ErrInvalidModel is returned for a file ONNX Runtime cannot load as a
	// model.
	ErrInvalidModel = errors.New("invalid onnx model")
	// ErrUnsupportedType is returned for a model input or output that is not
	// a tensor of a KServe v2 data type.
	ErrUnsupportedType = errors.New("unsupported input or output type")
)

// TensorInfo describes one model input or output, as the file reader
// onnxfile describes it: the two readers answer in one type, so that either
// stands for the other (Shape has -1 for every dimension the model does not
// fix, such as a symbolic batch dimension).
type TensorInfo = onnxfile.Value

// ModelInfo lists a model's inputs and outputs in graph order.
type ModelInfo struct {
	Inputs  []TensorInfo
	Outputs []TensorInfo
}

// ReadModelInfo loads the model at path just far enough to list its inputs
// and outputs, with the custom operator libraries its graph needs loaded
// first. It needs Init. Errors name the file.
func ReadModelInfo(path string, opLibraries ...string) (ModelInfo, error) {
	if err := initialized("read model info " + path); err != nil {
		return ModelInfo{}, err
	}
	st, err := os.Stat(path)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err // the path is named once, below
		}
		return ModelInfo{}, fmt.Errorf("read model info %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return ModelInfo{}, fmt.Errorf("read model info %s: %w: not a regular file", path, ErrInvalidModel)
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return ModelInfo{}, fmt.Errorf("read model info %s: %w", path, err)
	}
	defer func() { _ = opts.Destroy() }()
	// Listing inputs and outputs needs no optimized graph and no thread pool.
	if err := opts.SetGraphOptimizationLevel(ort.GraphOptimizationLevelDisableAll); err != nil {
		return ModelInfo{}, fmt.Errorf("read model info %s: %w", path, err)
	}
	if err := opts.SetIntraOpNumThreads(1); err != nil {
		return ModelInfo{}, fmt.Errorf("read model info %s: %w", path, err)
	}
	if err := RegisterOpLibraries(opts, opLibraries); err != nil {
		return ModelInfo{}, fmt.Errorf("read model info %s: %w", path, err)
	}
	ins, outs, err := ort.GetInputOutputInfoWithOptions(path, opts)
	if err != nil {
		return ModelInfo{}, fmt.Errorf("read model info %s: %w: %s", path, ErrInvalidModel, WithOpHint(loadModelReason(err, path), opLibraries))
	}
	var info ModelInfo
	if info.Inputs, err = convertInfos(ins); err != nil {
		return ModelInfo{}, fmt.Errorf("read model info %s: input %w", path, err)
	}
	if info.Outputs, err = convertInfos(outs); err != nil {
		return ModelInfo{}, fmt.Errorf("read model info %s: output %w", path, err)
	}
	return info, nil
}

// loadModelReason shortens ONNX Runtime's load error, which names the file
// again ("… Load model from <path> failed:<reason>"), to the reason.
func loadModelReason(err error, path string) string {
	msg := oneLine(err)
	if _, after, ok := strings.Cut(msg, path+" failed:"); ok {
		msg = strings.TrimSpace(after)
	}
	return msg
}

func convertInfos(in []ort.InputOutputInfo) ([]TensorInfo, error) {
	out := make([]TensorInfo, len(in))
	for i, io := range in {
		if io.OrtValueType != ort.ONNXTypeTensor {
			return nil, fmt.Errorf("%s: %w: %s", io.Name, ErrUnsupportedType, io.OrtValueType)
		}
		dt, ok := DataTypeOf(io.DataType)
		if !ok {
			return nil, fmt.Errorf("%s: %w: %s", io.Name, ErrUnsupportedType, io.DataType)
		}
		shape := slices.Clone([]int64(io.Dimensions))
		for j, d := range shape {
			if d < 0 {
				shape[j] = -1
			}
		}
		out[i] = TensorInfo{Name: io.Name, DataType: dt, Shape: shape}
	}
	return out, nil
}
