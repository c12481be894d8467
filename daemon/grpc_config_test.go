package daemon

import (
	"testing"
	"time"

	"github.com/gpulet/gpuletd/daemon/config"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/kserve/tritonpb"
	"github.com/stretchr/testify/require"
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
