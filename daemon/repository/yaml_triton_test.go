package repository

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// TestYAMLOverTritonLoadsAsTheFolder loads each folder twice, from the
// repository and as a load request's config built by YAMLOverTriton (what
// models load --from sends), and wants the same configuration.
func TestYAMLOverTritonLoadsAsTheFolder(t *testing.T) {
	lenet := strings.Replace(tritonLenet, `"bad"`, `"m"`, 1)
	labelled := strings.Replace(lenet, `dims: [ 10 ] }`, `dims: [ 10 ], label_filename: "labels.txt" }`, 1)
	tests := []struct {
		name  string
		yaml  string // "" writes none
		pbtxt string // "" writes none
		file  string // the fake reader's model file
	}{
		{name: "config.yaml alone", yaml: goodConfig + "profile: alexnet\nmemory_mb: 12.5\nplatform: onnxruntime\n", file: "onnx"},
		{name: "config.yaml without max_batch_size", yaml: "slo: 20ms\n", file: "onnx"},
		{name: "config.yaml with tensors and a variant",
			yaml: "slo: 30ms\nmax_batch_size: 0\ninputs: [{name: input, datatype: FP32, dims: [1, 4]}]\n" +
				"outputs: [{name: output, datatype: FP32, dims: [1, 2]}]\nvariant_of: big\naccuracy: 0.8\nresponse_cache: true\n", file: "fixed"},
		{name: "config.pbtxt alone", pbtxt: lenet, file: "onnx"},
		{name: "config.yaml's profile shapes", yaml: "slo: 40ms\nmax_batch_size: 8\nprofile_shapes: {ids: [128], mask: [128]}\n", file: "text"},
		{name: "config.yaml's profile shapes over config.pbtxt's", yaml: "profile_shapes: {ids: [64]}\n", file: "text",
			pbtxt: `max_batch_size: 8` + "\n" + `parameters { key: "profile_shapes" value { string_value: "ids:128 mask:128" } }` + "\n"},
		{name: "config.yaml over config.pbtxt", yaml: "slo: 7ms\nmax_batch_size: 4\nprofile: resnet50\n", pbtxt: labelled, file: "onnx"},
		{name: "config.yaml's queue bound", yaml: goodConfig + "max_queue: 12\n", file: "onnx"},
		{name: "config.yaml's queue bound over config.pbtxt's", yaml: "max_queue: 3\n", file: "onnx",
			pbtxt: lenet + "dynamic_batching { default_queue_policy { max_queue_size: 40 } }\n"},
		{name: "config.yaml's queue bound over a stateful config.pbtxt", yaml: "max_queue: 3\n", file: "stateful",
			pbtxt: strings.Replace(tritonRunningSum, `"sum"`, `"m"`, 1)},
		{name: "config.yaml's priority levels", yaml: goodConfig + "priority_levels: 3\ndefault_priority_level: 2\n", file: "onnx"},
		{name: "config.yaml's priority levels over config.pbtxt's", yaml: "priority_levels: 2\ndefault_priority_level: 1\n", file: "onnx",
			pbtxt: lenet + "dynamic_batching { priority_levels: 4 default_priority_level: 4 default_queue_policy { max_queue_size: 40 } }\n"},
		{name: "config.yaml's tensors over config.pbtxt's keep its labels", pbtxt: labelled, file: "onnx",
			yaml: "outputs: [{name: output, datatype: FP32, dims: [10]}]\nslo: 0s\n"},
		{name: "config.yaml's accuracy 0 over config.pbtxt's", yaml: "accuracy: 0\n", file: "onnx",
			pbtxt: lenet + `parameters { key: "accuracy" value { string_value: "0.9" } }` + "\n" +
				`parameters { key: "variant_of" value { string_value: "big" } }` + "\n"},
	}
	// Every field of config.yaml is tried by some case: one added later
	// fails here until YAMLOverTriton carries it and a case sets it.
	covered := map[string]bool{}
	for _, tt := range tests {
		for k := range yamlKeys([]byte(tt.yaml)) {
			covered[k] = true
		}
	}
	rt := reflect.TypeFor[ModelConfig]()
	for i := range rt.NumField() {
		if tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("yaml"), ","); tag != "-" {
			require.True(t, covered[tag], "no case sets config.yaml's %s", tag)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"1/model.onnx": tt.file, "labels.txt": "a\n"}
			if tt.pbtxt != "" {
				files[TritonConfigFile] = tt.pbtxt
			}
			root := writeRepo(t, map[string]entry{"m": {config: tt.yaml, files: files}})
			opts := Options{Read: fakeReader, DefaultSLO: time.Second}
			want, err := Load(Roots{root}, "m", opts)
			require.NoError(t, err)

			var pc tritonpb.ModelConfig
			if tt.pbtxt != "" {
				require.NoError(t, prototext.Unmarshal([]byte(tt.pbtxt), &pc))
			}
			if tt.yaml != "" {
				data, err := os.ReadFile(filepath.Join(root, "m", YAMLConfigFile))
				require.NoError(t, err)
				require.NoError(t, YAMLOverTriton(&pc, data))
			}
			opts.Override, err = protojson.Marshal(&pc)
			require.NoError(t, err)
			got, err := Load(Roots{root}, "m", opts)
			require.NoError(t, err, "config %s", opts.Override)
			require.Equal(t, want.Config, got.Config, "config %s", opts.Override)
			require.Equal(t, want.Inputs, got.Inputs)
			require.Equal(t, want.Outputs, got.Outputs)
		})
	}
}

func TestYAMLOverTritonRefusesABadFile(t *testing.T) {
	var pc tritonpb.ModelConfig
	require.ErrorContains(t, YAMLOverTriton(&pc, []byte("slo: 20ms\nmax_batch: 4\n")), "read config.yaml")
	require.ErrorContains(t, YAMLOverTriton(&pc, []byte("slo: 2h\n")), "slo: 2h0m0s is not allowed")
}
