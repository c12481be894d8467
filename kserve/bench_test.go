package kserve

import (
	"fmt"
	"strings"
	"testing"
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
