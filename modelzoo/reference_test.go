package modelzoo_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/modelzoo"
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// TestMLPMatchesReference computes the MLP in plain Go from the weights in
// the built graph and compares it with onnxruntime's result on the
// serialized file: this checks the weight encoding (little-endian raw_data,
// [out,in] layout with transB) end to end.
func TestMLPMatchesReference(t *testing.T) {
	initORT(t)
	const seed = 5
	m, err := modelzoo.Lookup("mlp")
	require.NoError(t, err)
	model, err := modelzoo.Build("mlp", seed)
	require.NoError(t, err)
	weights := map[string]*onnxpb.TensorProto{}
	for _, init := range model.Graph.Initializer {
		weights[init.Name] = init
	}

	in := randomInput(m, 4, 9)
	x := in.Data
	rows := 4
	for _, layer := range []struct {
		name string
		relu bool
	}{{"fc1", true}, {"fc2", true}, {"fc3", false}} {
		w, b := weights[layer.name+".weight"], weights[layer.name+".bias"]
		require.NotNil(t, w, layer.name)
		require.NotNil(t, b, layer.name)
		x = dense(x, rows, decode(w), int(w.Dims[0]), int(w.Dims[1]), decode(b), layer.relu)
	}

	got := run(t, writeModel(t, "mlp", seed), m, in)
	require.Equal(t, []int64{4, 10}, got.Shape)
	requireClose(t, x, got.Data)
}

func decode(t *onnxpb.TensorProto) []float32 {
	out := make([]float32, len(t.RawData)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.RawData[4*i:]))
	}
	return out
}

// dense returns x·Wᵀ+b (optionally Relu'd) for x [rows,in] and W [out,in].
func dense(x []float32, rows int, w []float32, out, in int, b []float32, relu bool) []float32 {
	y := make([]float32, rows*out)
	for r := range rows {
		for o := range out {
			s := float64(b[o])
			for i := range in {
				s += float64(x[r*in+i]) * float64(w[o*in+i])
			}
			if relu && s < 0 {
				s = 0
			}
			y[r*out+o] = float32(s)
		}
	}
	return y
}
