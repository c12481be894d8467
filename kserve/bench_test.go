package kserve

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/gpulet/gpuletd/executor/tensor"
)

func lenetBody() []byte {
	vals := make([]string, 784)
	for i := range vals {
		vals[i] = fmt.Sprintf("%.6f", float64(i%97)/97)
	}
	return []byte(`{"inputs":[{"name":"input","shape":[1,1,28,28],"datatype":"FP32","data":[` + strings.Join(vals, ",") + `]}]}`)
}

// BenchmarkDecodeJSON decodes a LeNet request (784 FP32 values as JSON).
func BenchmarkDecodeJSON(b *testing.B) {
	body := lenetBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRequest(body, -1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeBinary decodes the same request with a binary tensor.
func BenchmarkDecodeBinary(b *testing.B) {
	head := `{"inputs":[{"name":"input","shape":[1,1,28,28],"datatype":"FP32","parameters":{"binary_data_size":3136}}]}`
	body := append([]byte(head), make([]byte, 3136)...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeRequest(body, int64(len(head))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeJSON writes answers as JSON: a classifier's 1 000 scores
// and a dense output of a million values (a segmentation-like model's),
// allocations and bytes per answer.
func BenchmarkEncodeJSON(b *testing.B) {
	for _, n := range []int{1000, 1 << 20} {
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(i%997) / 997
		}
		x, err := tensor.FromFloat32s("y", []int64{1, int64(n)}, vals)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%d values", n), func(b *testing.B) {
			b.SetBytes(int64(len(x.Data)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := EncodeResponse(InferResponseJSON{ModelName: "m"}, []Output{{Tensor: x}})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.WriteTo(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncodeSmallAnswer formats a LeNet answer (10 scores) whole, as
// the daemon does an answer that goes with its length.
func BenchmarkEncodeSmallAnswer(b *testing.B) {
	x, err := tensor.FromFloat32s("output", []int64{1, 10}, []float32{0.1, -0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := EncodeResponse(InferResponseJSON{ModelName: "lenet5", ModelVersion: "1"}, []Output{{Tensor: x}})
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Bytes()) == 0 {
			b.Fatal("empty")
		}
	}
}
