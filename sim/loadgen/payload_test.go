package loadgen

import (
	"testing"

	"github.com/gpulet/gpuletd/kserve"
	"github.com/stretchr/testify/require"
)

// BenchmarkServerDecode is what the server's decoder (kserve.DecodeRequest)
// costs on the payloads NewPayload builds for the modelzoo's lenet5
// ([1,1,28,28] FP32: 784 values), as JSON and as a binary tensor.
func BenchmarkServerDecode(b *testing.B) {
	m := &Model{MaxBatchSize: 32, Metadata: kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{{Name: "input", DataType: "FP32", Shape: []int64{-1, 1, 28, 28}}}}}
	for _, bin := range []bool{false, true} {
		p, err := NewPayload(m, bin, 1)
		require.NoError(b, err)
		b.Run(map[bool]string{false: "json", true: "binary"}[bin], func(b *testing.B) {
			b.SetBytes(int64(len(p.Body)))
			for b.Loop() {
				if _, err := kserve.DecodeRequest(p.Body, p.JSONLen); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewPayload is the cost of building one lenet5 request.
func BenchmarkNewPayload(b *testing.B) {
	m := &Model{MaxBatchSize: 32, Metadata: kserve.ModelMetadata{Inputs: []kserve.TensorMetadata{{Name: "input", DataType: "FP32", Shape: []int64{-1, 1, 28, 28}}}}}
	for b.Loop() {
		if _, err := NewPayload(m, false, 1); err != nil {
			b.Fatal(err)
		}
	}
}
