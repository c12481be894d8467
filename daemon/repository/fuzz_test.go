package repository

import (
	"testing"
)

// FuzzParseTriton feeds arbitrary config.pbtxt files: reading one must never
// panic, whatever it says (a repository scan reads every folder's, and a
// panic there would stop the daemon at start or at a poll).
func FuzzParseTriton(f *testing.F) {
	f.Add([]byte(`name: "m" platform: "onnxruntime_onnx" max_batch_size: 8
input [ { name: "x" data_type: TYPE_FP32 dims: [ 3, -1 ] reshape: { shape: [ ] } } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 10 ] label_filename: "labels.txt" } ]
version_policy: { specific: { versions: [ 1, 3 ] } }
parameters { key: "slo" value { string_value: "50ms" } }
dynamic_batching { max_queue_delay_microseconds: 100 }`), "m")
	f.Add([]byte(`name: "p" platform: "ensemble"
input [ { name: "x" data_type: TYPE_UINT8 dims: [ -1 ] } ]
output [ { name: "z" data_type: TYPE_FP32 dims: [ 4 ] } ]
ensemble_scheduling { step [
  { model_name: "a" model_version: -1 input_map { key: "in" value: "x" } output_map { key: "out" value: "y" } },
  { model_name: "b" model_version: -1 input_map { key: "in" value: "y" } output_map { key: "out" value: "z" } } ] }
parameters { key: "fanout" value { string_value: "y" } }
parameters { key: "path_accuracy" value { string_value: "a/b=0.9" } }`), "p")
	f.Add([]byte(`sequence_batching {} instance_group [ { count: 2 kind: KIND_GPU } ]`), "s")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		_, _ = parseTriton(data, name)
		_, _ = parseTritonJSON(data, name)
	})
}

// FuzzParseModelConfig feeds arbitrary config.yaml files, as
// FuzzParseTriton does config.pbtxt ones.
func FuzzParseModelConfig(f *testing.F) {
	f.Add([]byte("slo: 50ms\nmax_batch_size: 8\nprofile: resnet50\nmemory_mb: 100\n"))
	f.Add([]byte("inputs:\n  - {name: x, datatype: FP32, dims: [3, -1]}\nversions: {latest: 2}\n"))
	f.Add([]byte("pipeline:\n  steps: [{model: a}, {model: b, fanout: y}]\nmin_accuracy: 0.8\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseModelConfig(data)
	})
}
