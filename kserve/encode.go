package kserve

import (
	"encoding/json"
	"fmt"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// Output is one output tensor to send and how it travels: as JSON, as
// binary data, or (Shm) already written into a shared-memory region, the
// answer carrying only its place.
type Output struct {
	Tensor tensor.Tensor
	Binary bool
	Shm    *ShmRef
}

// EncodeResponse writes an inference response. When any output is binary the
// body is the JSON header followed by the raw tensors, and jsonLen is the
// value for the Inference-Header-Content-Length header; otherwise jsonLen is
// -1 and the body is JSON alone.
func EncodeResponse(head InferResponseJSON, outs []Output) (body []byte, jsonLen int64, err error) {
	var binParts [][]byte
	head.Outputs = make([]ResponseOutput, 0, len(outs))
	for _, o := range outs {
		t := o.Tensor
		ro := ResponseOutput{Name: t.Name, Shape: t.Shape, DataType: string(t.DataType)}
		if ro.Shape == nil {
			ro.Shape = []int64{}
		}
		switch {
		case o.Shm != nil:
			written := *o.Shm
			written.Size = int64(len(t.Data))
			ro.Parameters = written.Parameters()
		case o.Binary:
			ro.Parameters = map[string]any{"binary_data_size": len(t.Data)}
			binParts = append(binParts, t.Data)
		default:
			if ro.Data, err = encodeData(t); err != nil {
				return nil, 0, fmt.Errorf("encode output %q: %w", t.Name, err)
			}
		}
		head.Outputs = append(head.Outputs, ro)
	}
	js, err := json.Marshal(head)
	if err != nil {
		return nil, 0, fmt.Errorf("encode response: %w", err)
	}
	if len(binParts) == 0 {
		return js, -1, nil
	}
	total := len(js)
	for _, p := range binParts {
		total += len(p)
	}
	body = make([]byte, 0, total)
	body = append(body, js...)
	for _, p := range binParts {
		body = append(body, p...)
	}
	return body, int64(len(js)), nil
}
