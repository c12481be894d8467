package modelzoo_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo"
)

func mustTensor(t *testing.T, name string, dt tensor.DataType, shape []int64, data []byte) tensor.Tensor {
	t.Helper()
	x, err := tensor.New(name, dt, shape, data)
	require.NoError(t, err)
	return x
}

// TestFormModelsRun runs each form model in ONNX Runtime on inputs of the
// forms it declares.
func TestFormModelsRun(t *testing.T) {
	initORT(t)
	require.Equal(t, []string{"vad", "mlp16", "tokens", "frames", "words"}, modelzoo.FormModels())

	t.Run("vad", func(t *testing.T) {
		audio, err := tensor.FromFloat32s("input", []int64{1, 5}, []float32{0.1, -0.2, 0.3, 0.4, 0.5})
		require.NoError(t, err)
		state, err := tensor.Zeros("state", tensor.FP32, []int64{2, 1, 16})
		require.NoError(t, err)
		sr := mustTensor(t, "sr", tensor.Int64, []int64{}, binary.LittleEndian.AppendUint64(nil, 16000))
		outs, err := onnxrt.Run(writeModel(t, "vad", 1), map[string]tensor.Tensor{"input": audio, "state": state, "sr": sr}, 1)
		require.NoError(t, err)
		require.Equal(t, []int64{1, 1}, outs[0].Shape)
		require.Equal(t, []int64{2, 1, 16}, outs[1].Shape)
		score, err := outs[0].Float32s()
		require.NoError(t, err)
		// Zero state: the score is sigmoid(mean(audio) * 16000/16000).
		require.InDelta(t, 1/(1+math.Exp(-0.22)), score[0], 1e-6)
	})

	t.Run("mlp16", func(t *testing.T) {
		in := make([]byte, 2*2*16)
		for i := 0; i < 32; i++ {
			binary.LittleEndian.PutUint16(in[2*i:], 0x3c00) // 1.0
		}
		outs, err := onnxrt.Run(writeModel(t, "mlp16", 1),
			map[string]tensor.Tensor{"input": mustTensor(t, "input", tensor.FP16, []int64{2, 16}, in)}, 1)
		require.NoError(t, err)
		require.Equal(t, tensor.FP16, outs[0].DataType)
		require.Equal(t, tensor.BF16, outs[1].DataType)
		require.Equal(t, []int64{2, 4}, outs[1].Shape)
		require.Equal(t, outs[0].Data[:8], outs[0].Data[8:], "equal rows give equal answers")
	})

	t.Run("tokens", func(t *testing.T) {
		ids := make([]byte, 0, 2*3*8)
		for _, id := range []uint64{1, 2, 3, 1, 2, 3} { // two equal rows of three tokens
			ids = binary.LittleEndian.AppendUint64(ids, id)
		}
		outs, err := onnxrt.Run(writeModel(t, "tokens", 1),
			map[string]tensor.Tensor{"ids": mustTensor(t, "ids", tensor.Int64, []int64{2, 3}, ids)}, 1)
		require.NoError(t, err)
		require.Equal(t, []int64{2, 3, 4}, outs[0].Shape, "an embedding per token")
		require.Equal(t, []int64{2, 4}, outs[1].Shape)
		require.Equal(t, outs[1].Data[:16], outs[1].Data[16:], "equal rows give equal answers")
	})

	t.Run("frames", func(t *testing.T) {
		model := writeModel(t, "frames", 1)
		for _, hw := range [][2]int64{{32, 32}, {7, 12}} { // any height and width from 5 up
			n := 2 * 3 * hw[0] * hw[1]
			vals := make([]float32, n)
			for i := range vals {
				vals[i] = float32(i%(int(n)/2)) / float32(n) // two equal rows
			}
			img, err := tensor.FromFloat32s("frames", []int64{2, 3, hw[0], hw[1]}, vals)
			require.NoError(t, err)
			outs, err := onnxrt.Run(model, map[string]tensor.Tensor{"frames": img}, 1)
			require.NoError(t, err)
			require.Equal(t, []int64{2, 4}, outs[0].Shape)
			require.Equal(t, outs[0].Data[:16], outs[0].Data[16:], "equal rows give equal answers")
		}
		one, err := tensor.Zeros("frames", tensor.FP32, []int64{1, 3, 1, 1})
		require.NoError(t, err)
		_, err = onnxrt.Run(model, map[string]tensor.Tensor{"frames": one}, 1)
		require.Error(t, err, "a 5x5 convolution does not run on a 1x1 image")
	})

	t.Run("words", func(t *testing.T) {
		var text []byte
		for _, w := range []string{"hello", "", "a,b"} {
			text = tensor.AppendBytesElement(text, []byte(w))
		}
		outs, err := onnxrt.Run(writeModel(t, "words", 1),
			map[string]tensor.Tensor{"text": mustTensor(t, "text", tensor.Bytes, []int64{3}, text)}, 1)
		require.NoError(t, err)
		elems, err := tensor.BytesElements(outs[0].Data)
		require.NoError(t, err)
		require.Equal(t, [][]byte{[]byte("HELLO"), {}, []byte("A,B")}, elems)
		require.Equal(t, mustTensor(t, "count", tensor.Int64, []int64{}, binary.LittleEndian.AppendUint64(nil, 3)), outs[1])
	})
}

// TestFormModelsTritonConfig writes the form models as Triton has them: a
// scalar reshaped from [1], no batching, the TYPE_* names.
func TestFormModelsTritonConfig(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, modelzoo.WriteRepository(dir, modelzoo.FormModels(), 1, modelzoo.AsTriton()))
	b, err := os.ReadFile(filepath.Join(dir, "vad", "config.pbtxt"))
	require.NoError(t, err)
	vad := string(b)
	for _, want := range []string{`name: "vad"`, "max_batch_size: 0", "dims: [ 1, -1 ]", "data_type: TYPE_INT64\n    dims: [ 1 ]\n    reshape: { shape: [ ] }"} {
		require.Contains(t, vad, want)
	}
	require.NotContains(t, vad, "dynamic_batching", "a model that does not batch")
	b, err = os.ReadFile(filepath.Join(dir, "mlp16", "config.pbtxt"))
	require.NoError(t, err)
	require.True(t, strings.Contains(string(b), "TYPE_FP16") && strings.Contains(string(b), "TYPE_BF16"))
	b, err = os.ReadFile(filepath.Join(dir, "words", "config.pbtxt"))
	require.NoError(t, err)
	require.Contains(t, string(b), "TYPE_STRING")
	b, err = os.ReadFile(filepath.Join(dir, "tokens", "config.pbtxt"))
	require.NoError(t, err)
	require.Contains(t, string(b), `parameters { key: "profile_shapes" value { string_value: "ids:32" } }`)

	err = modelzoo.WriteRepository(t.TempDir(), []string{"nope"}, 1)
	require.ErrorIs(t, err, modelzoo.ErrUnknownModel)
	require.ErrorContains(t, err, "words")
}
