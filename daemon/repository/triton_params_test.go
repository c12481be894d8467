package repository

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/prototext"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// TestTritonParametersReadBack writes a model's settings as a
// config.pbtxt's parameters and reads the file back: the settings come back
// as they were, and settings left unset write no parameter.
func TestTritonParametersReadBack(t *testing.T) {
	tests := []struct {
		name   string
		folder string // the config.pbtxt the parameters are added to
		base   string
		c      ModelConfig
		keys   []string
	}{
		{name: "every setting", folder: "m", base: `name: "m" backend: "onnxruntime"`, c: ModelConfig{SLO: config.Duration(75 * time.Millisecond), Profile: "bert", MemoryMB: 420.5,
			ProfileShapes: map[string][]int64{"input_ids": {128}, "attention_mask": {128}}, VariantOf: "bert-large", Accuracy: 0.91},
			keys: []string{ParamAccuracy, ParamMemoryMB, ParamProfile, ParamProfileShapes, ParamSLO, ParamVariant}},
		{name: "an SLO alone", folder: "m", base: `name: "m" backend: "onnxruntime"`, c: ModelConfig{SLO: config.Duration(time.Second)}, keys: []string{ParamSLO}},
		{name: "a pipeline's accuracy settings", folder: "traffic",
			base: strings.Replace(trafficEnsemble, `parameters { key: "slo" value { string_value: "250ms" } }`, "", 1), c: ModelConfig{SLO: config.Duration(80 * time.Millisecond), MinAccuracy: 0.9,
				PathAccuracy: map[string]float64{"detector/classifier": 1, "detector/classifier-lite": 0.82}},
			keys: []string{ParamMinAccuracy, ParamPathAccuracy, ParamSLO}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			params := TritonParameters(tc.c)
			require.ElementsMatch(t, tc.keys, sortedKeys(params))

			data, err := prototext.Marshal(&tritonpb.ModelConfig{Parameters: params})
			require.NoError(t, err)
			data = append([]byte(tc.base+"\n"), data...)
			back, err := parseTriton(data, tc.folder)
			require.NoError(t, err, "%s", data)
			got := back.cfg
			require.Equal(t, tc.c.SLO, got.SLO)
			require.Equal(t, tc.c.Profile, got.Profile)
			require.Equal(t, tc.c.MemoryMB, got.MemoryMB)
			require.Equal(t, tc.c.ProfileShapes, got.ProfileShapes)
			require.Equal(t, tc.c.VariantOf, got.VariantOf)
			require.Equal(t, tc.c.Accuracy, got.Accuracy)
			require.Equal(t, tc.c.MinAccuracy, got.MinAccuracy)
			require.Equal(t, tc.c.PathAccuracy, got.PathAccuracy)
		})
	}
}
