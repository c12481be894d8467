package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

func TestTritonConfig(t *testing.T) {
	img := []repository.TensorSpec{{Name: "input", DataType: tensor.FP32, Dims: []int64{1, 28, 28}}}
	tests := []struct {
		name        string
		m           repository.Model
		platform    string
		backend     string
		inType      tritonpb.DataType
		wantBatcher bool
	}{
		{name: "a batching ONNX model", m: repository.Model{Family: "lenet5", Platform: repository.PlatformONNX,
			Config: repository.ModelConfig{MaxBatchSize: 32, LabelFiles: map[string]string{"output": "labels.txt"}}, Inputs: img,
			Outputs: []repository.TensorSpec{{Name: "output", DataType: tensor.FP32, Dims: []int64{10}}}},
			platform: "onnxruntime_onnx", backend: "onnxruntime", inType: tritonpb.DataType_TYPE_FP32, wantBatcher: true},
		{name: "a TorchScript model that does not batch", m: repository.Model{Family: "tok", Platform: repository.PlatformTorchScript,
			Inputs: []repository.TensorSpec{{Name: "text", DataType: tensor.Bytes, Dims: []int64{1}}}, Outputs: []repository.TensorSpec{{Name: "ids", DataType: tensor.Int64, Dims: []int64{16}}}},
			platform: "pytorch_libtorch", backend: "pytorch", inType: tritonpb.DataType_TYPE_STRING},
		{name: "a pipeline", m: repository.Model{Family: "pipe", Platform: repository.PlatformEnsemble,
			Config: repository.ModelConfig{MaxBatchSize: 8}, Inputs: img, Outputs: []repository.TensorSpec{{Name: "label", DataType: tensor.Int32, Dims: []int64{1}}}},
			platform: "ensemble", inType: tritonpb.DataType_TYPE_FP32},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tritonConfig(&tc.m)
			require.Equal(t, tc.m.Family, c.Name)
			require.Equal(t, tc.platform, c.Platform)
			require.Equal(t, tc.backend, c.Backend)
			require.Equal(t, int32(tc.m.Config.MaxBatchSize), c.GetMaxBatchSize())
			require.Len(t, c.Input, len(tc.m.Inputs))
			require.Equal(t, tc.m.Inputs[0].Name, c.Input[0].Name)
			require.Equal(t, tc.inType, c.Input[0].DataType)
			require.Equal(t, tc.m.Inputs[0].Dims, c.Input[0].Dims, "no batch dimension, as in a config.pbtxt")
			require.Len(t, c.Output, len(tc.m.Outputs))
			require.Equal(t, repository.TritonDataType(tc.m.Outputs[0].DataType), c.Output[0].DataType)
			require.NotEqual(t, tritonpb.DataType_TYPE_INVALID, c.Output[0].DataType)
			require.Equal(t, tc.wantBatcher, c.GetDynamicBatching() != nil)
			require.Equal(t, tc.m.Config.LabelFiles[c.Output[0].Name], c.Output[0].LabelFilename)
		})
	}
}

// TestTritonConfigSaysGpuletdSettings: the answer carries the model's own
// settings as the parameters a config.pbtxt gives them in, and a reshape.
func TestTritonConfigSaysGpuletdSettings(t *testing.T) {
	m := repository.Model{Family: "textenc", Platform: repository.PlatformONNX,
		Config: repository.ModelConfig{MaxBatchSize: 16, SLO: config.Duration(80 * time.Millisecond),
			ProfileShapes: map[string][]int64{"input_ids": {128}}},
		Inputs:  []repository.TensorSpec{{Name: "input_ids", DataType: tensor.Int64, Dims: []int64{-1}}},
		Outputs: []repository.TensorSpec{{Name: "score", DataType: tensor.FP32, Dims: []int64{1}, Reshape: []int64{}}}}
	c := tritonConfig(&m)
	params := map[string]string{}
	for k, v := range c.Parameters {
		params[k] = v.GetStringValue()
	}
	require.Equal(t, map[string]string{"slo": "80ms", "profile_shapes": "input_ids:128"}, params)
	require.Nil(t, c.GetDynamicBatching().GetDefaultQueuePolicy(), "no queue bound of its own")
	m.Config.MaxQueue = 16
	require.EqualValues(t, 16, tritonConfig(&m).GetDynamicBatching().GetDefaultQueuePolicy().GetMaxQueueSize(), "its own queue bound, as Triton's")
	m.Config.Queue = repository.QueuePolicy{Timeout: 3 * time.Millisecond, AllowOverride: true}
	m.Config.PriorityLevels, m.Config.DefaultPriority = 2, 2
	m.Config.LevelQueues = map[int]repository.QueuePolicy{1: {}, 2: {MaxQueue: 4, Delay: true}}
	db := tritonConfig(&m).GetDynamicBatching()
	require.True(t, proto.Equal(&tritonpb.ModelQueuePolicy{MaxQueueSize: 16, DefaultTimeoutMicroseconds: 3000, AllowTimeoutOverride: true}, db.DefaultQueuePolicy), "%v", db.DefaultQueuePolicy)
	require.True(t, proto.Equal(&tritonpb.ModelQueuePolicy{}, db.PriorityQueuePolicy[1]), "a level's policy that asks nothing")
	require.True(t, proto.Equal(&tritonpb.ModelQueuePolicy{MaxQueueSize: 4, TimeoutAction: tritonpb.ModelQueuePolicy_DELAY}, db.PriorityQueuePolicy[2]))
	require.Empty(t, c.DefaultModelFilename)
	require.Empty(t, c.CcModelFilenames)
	m.Config.ModelFilename, m.Config.CCModelFilenames = "net.onnx", map[string]string{"9.0": "net_h100.onnx"}
	files := tritonConfig(&m)
	require.Equal(t, "net.onnx", files.DefaultModelFilename)
	require.Equal(t, map[string]string{"9.0": "net_h100.onnx"}, files.CcModelFilenames, "the model files as configured")
	require.Nil(t, c.Input[0].Reshape, "an input without a reshape says none")
	require.NotNil(t, c.Output[0].Reshape, "a scalar's reshape is there, empty")
	require.Empty(t, c.Output[0].Reshape.Shape)
}

func TestTritonDataTypeRoundTrip(t *testing.T) {
	for _, dt := range []tensor.DataType{tensor.Bool, tensor.Uint8, tensor.Int8, tensor.Int32, tensor.Int64, tensor.FP16, tensor.BF16, tensor.FP32, tensor.FP64, tensor.Bytes} {
		tt := repository.TritonDataType(dt)
		require.NotEqual(t, tritonpb.DataType_TYPE_INVALID, tt, dt)
		if dt != tensor.Bytes {
			require.Equal(t, "TYPE_"+string(dt), tt.String(), "Triton's name is the protocol's, prefixed")
		}
	}
	require.Equal(t, tritonpb.DataType_TYPE_STRING, repository.TritonDataType(tensor.Bytes), "BYTES is Triton's TYPE_STRING")
	require.Equal(t, tritonpb.DataType_TYPE_FP32, repository.TritonDataType(tensor.FP32))
	require.Equal(t, tritonpb.DataType_TYPE_INVALID, repository.TritonDataType(tensor.DataType("COMPLEX64")))
}

// A pipeline's configuration written out as a config.pbtxt reads back as
// the same pipeline: its steps as written (out of the order they run in
// here), each model's version and maps, and its fan-out. It said platform
// "ensemble" alone before, which read back as no pipeline at all.
func TestAPipelinesConfigReadsBackAsItself(t *testing.T) {
	const pbtxt = `name: "p"
platform: "ensemble"
max_batch_size: 1
input [ { name: "image", data_type: TYPE_FP32, dims: [ 64 ] } ]
output [ { name: "labels", data_type: TYPE_FP32, dims: [ -1, 10 ] } ]
parameters { key: "slo" value { string_value: "300ms" } }
parameters { key: "fanout" value { string_value: "objects" } }
ensemble_scheduling {
  step [
    { model_name: "labeler", model_version: 2, input_map { key: "object" value: "objects" }, output_map { key: "scores" value: "labels" } },
    { model_name: "spotter", model_version: -1, input_map { key: "image" value: "image" }, output_map { key: "objects" value: "objects" } }
  ]
}
`
	read := func(text []byte) *repository.Model {
		t.Helper()
		root := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(root, "p"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "p", "config.pbtxt"), text, 0o644))
		ix, err := repository.Scan(repository.Roots{root}, testRepositoryOptions(time.Second))
		require.NoError(t, err)
		require.Empty(t, ix.Broken)
		m, err := ix.Get("p")
		require.NoError(t, err)
		return m
	}
	m := read([]byte(pbtxt))
	require.Equal(t, "spotter", m.Config.Ensemble.Steps[0].Model, "run in an order it can")
	c := tritonConfig(m)
	require.Len(t, c.GetEnsembleScheduling().GetStep(), 2)
	require.Equal(t, "labeler", c.GetEnsembleScheduling().Step[0].ModelName, "as written")
	require.Equal(t, int64(2), c.GetEnsembleScheduling().Step[0].ModelVersion)
	require.Equal(t, int64(-1), c.GetEnsembleScheduling().Step[1].ModelVersion)
	require.Equal(t, "objects", c.Parameters["fanout"].GetStringValue())
	text, err := prototext.Marshal(c)
	require.NoError(t, err)
	again := read(text)
	require.Equal(t, m.Config.Ensemble, again.Config.Ensemble)
	require.Equal(t, m.Config.SLO, again.Config.SLO)
	require.Equal(t, m.Inputs, again.Inputs)
	require.Equal(t, m.Outputs, again.Outputs)
}
