package onnxrt

import (
	"context"
	"fmt"
	"slices"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// Float32Tensor is a dense row-major FP32 tensor.
type Float32Tensor struct {
	Shape []int64
	Data  []float32
}

// RunFloat32 runs the model at path once on FP32 inputs, keyed by input
// name, and returns every output, keyed by name, which must be FP32 too.
// intraOpThreads sets ONNX Runtime's intra-op thread count (0: its
// default). It opens and closes a session per call: meant for tests and
// one-off checks, not serving. It needs Init.
func RunFloat32(path string, inputs map[string]Float32Tensor, intraOpThreads int) (map[string]Float32Tensor, error) {
	info, err := ReadModelInfo(path)
	if err != nil {
		return nil, fmt.Errorf("run model: %w", err)
	}
	inNames := make([]string, 0, len(info.Inputs))
	for _, in := range info.Inputs {
		inNames = append(inNames, in.Name)
	}
	outNames := make([]string, 0, len(info.Outputs))
	for _, out := range info.Outputs {
		outNames = append(outNames, out.Name)
	}

	opts, err := oneOffOptions(intraOpThreads)
	if err != nil {
		return nil, fmt.Errorf("run model %s: %w", path, err)
	}
	defer func() { _ = opts.Destroy() }()
	sess, err := ort.NewDynamicAdvancedSession(path, inNames, outNames, opts)
	if err != nil {
		return nil, fmt.Errorf("run model %s: %s", path, oneLine(err))
	}
	defer func() { _ = sess.Destroy() }()

	values := make([]ort.Value, len(inNames))
	defer func() {
		for _, v := range values {
			if v != nil {
				_ = v.Destroy()
			}
		}
	}()
	for i, name := range inNames {
		in, ok := inputs[name]
		if !ok {
			return nil, fmt.Errorf("run model %s: missing input %q", path, name)
		}
		t, err := ort.NewTensor(ort.NewShape(in.Shape...), in.Data)
		if err != nil {
			return nil, fmt.Errorf("run model %s: input %q: %s", path, name, oneLine(err))
		}
		values[i] = t
	}
	if len(inputs) != len(inNames) {
		return nil, fmt.Errorf("run model %s: got %d inputs, model has %d (%v)", path, len(inputs), len(inNames), inNames)
	}

	outs := make([]ort.Value, len(outNames))
	defer func() {
		for _, v := range outs {
			if v != nil {
				_ = v.Destroy()
			}
		}
	}()
	if err := sess.Run(values, outs); err != nil {
		return nil, fmt.Errorf("run model %s: %s", path, oneLine(err))
	}
	result := make(map[string]Float32Tensor, len(outNames))
	for i, name := range outNames {
		t, ok := outs[i].(*ort.Tensor[float32])
		if !ok {
			return nil, fmt.Errorf("run model %s: output %q: %w: not FP32", path, name, ErrUnsupportedType)
		}
		result[name] = Float32Tensor{Shape: slices.Clone([]int64(t.GetShape())), Data: slices.Clone(t.GetData())}
	}
	return result, nil
}

// Run runs the model at path once on inputs keyed by name, of any data
// type and rank, through a Session, and returns every output in the
// model's order. intraOpThreads is as for RunFloat32. It opens and closes a
// session per call: meant for tests and one-off checks. It needs Init.
func Run(path string, inputs map[string]tensor.Tensor, intraOpThreads int) ([]tensor.Tensor, error) {
	info, err := ReadModelInfo(path)
	if err != nil {
		return nil, fmt.Errorf("run model: %w", err)
	}
	if len(inputs) != len(info.Inputs) {
		return nil, fmt.Errorf("run model %s: got %d inputs, model has %d", path, len(inputs), len(info.Inputs))
	}
	ins := make([]tensor.Tensor, len(info.Inputs))
	inNames := make([]string, len(info.Inputs))
	for i, in := range info.Inputs {
		t, ok := inputs[in.Name]
		if !ok {
			return nil, fmt.Errorf("run model %s: missing input %q", path, in.Name)
		}
		ins[i], inNames[i] = t, in.Name
	}
	outNames := make([]string, len(info.Outputs))
	for i, out := range info.Outputs {
		outNames[i] = out.Name
	}
	opts, err := oneOffOptions(intraOpThreads)
	if err != nil {
		return nil, fmt.Errorf("run model %s: %w", path, err)
	}
	defer func() { _ = opts.Destroy() }()
	sess, err := NewSession(path, inNames, outNames, opts)
	if err != nil {
		return nil, fmt.Errorf("run model: %w", err)
	}
	defer sess.Close()
	outs := make([]tensor.Tensor, len(outNames))
	if err := sess.Run(context.Background(), ins, outs); err != nil {
		return nil, fmt.Errorf("run model %s: %w", path, err)
	}
	return outs, nil
}

// oneOffOptions are the session options of RunFloat32 and Run.
func oneOffOptions(intraOpThreads int) (*ort.SessionOptions, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	if intraOpThreads > 0 {
		if err := opts.SetIntraOpNumThreads(intraOpThreads); err != nil {
			_ = opts.Destroy()
			return nil, err
		}
	}
	return opts, nil
}
