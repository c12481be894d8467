package repository

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/gpulet/gpuletd/kserve/tritonpb"
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
	f.Add([]byte(`name: "t" backend: "onnxruntime" max_batch_size: 4
parameters [ { key: "slo" value { string_value: "1m" } }, { key: "profile_shapes" value { string_value: " " } },
  { key: "memory_mb" value { string_value: "1e3" } }, { key: "accuracy" value { string_value: "0.5" } },
  { key: "variant_of" value { string_value: " big " } }, { key: "profile" value { string_value: " x\n" } } ]`), "t")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		tc, err := parseTriton(data, name)
		_, _ = parseTritonJSON(data, name)
		if err != nil {
			return
		}
		// The settings it read, written back as parameters
		// (TritonParameters, as gRPC's ModelConfig answers them), read
		// the same.
		var pc tritonpb.ModelConfig
		require.NoError(t, prototext.Unmarshal(data, &pc))
		params := TritonParameters(tc.cfg)
		for k, v := range pc.Parameters {
			if _, written := params[k]; !written && !slices.Contains(settingParams, k) {
				params[k] = v // fanout, and keys gpuletd ignores
			}
		}
		pc.Parameters = params
		again, err := fromTriton(&pc, name)
		require.NoError(t, err, "parameters %v", params)
		want, got := tc.cfg, again.cfg
		require.Equal(t, want.SLO, got.SLO)
		require.Equal(t, want.Profile, got.Profile)
		require.Equal(t, want.ProfileShapes, got.ProfileShapes)
		require.Equal(t, want.MemoryMB, got.MemoryMB)
		require.Equal(t, want.VariantOf, got.VariantOf)
		require.Equal(t, want.Accuracy, got.Accuracy)
		require.Equal(t, want.MinAccuracy, got.MinAccuracy)
		require.Equal(t, want.PathAccuracy, got.PathAccuracy)
	})
}

// settingParams are the parameters TritonParameters writes from the
// settings read, when they are set.
var settingParams = []string{ParamSLO, ParamProfile, ParamProfileShapes, ParamMemoryMB, ParamVariant, ParamAccuracy, ParamMinAccuracy, ParamPathAccuracy}

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
