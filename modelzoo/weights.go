package modelzoo

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// weights draws a model's random parameters from a PCG stream. The stream
// is fixed by the seed and the model's name, so equal inputs give
// bit-identical weights on every platform (math/rand/v2's PCG and
// NormFloat64 are specified algorithms).
type weights struct {
	rng *rand.Rand
}

func newWeights(model string, seed uint64) *weights {
	h := fnv.New64a()
	_, _ = h.Write([]byte(model)) // hash.Hash never fails to write
	return &weights{rng: rand.New(rand.NewPCG(seed, h.Sum64()))}
}

// normal returns n draws from N(0, std²).
func (w *weights) normal(n int, std float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(w.rng.NormFloat64() * std)
	}
	return out
}

// he returns n weights for a layer followed by a Relu: N(0, 2/fanIn) keeps
// the mean square of activations steady from layer to layer.
func (w *weights) he(n, fanIn int) []float32 {
	return w.normal(n, math.Sqrt(2/float64(fanIn)))
}

// glorot returns n weights for a linear output layer: N(0, 2/(fanIn+fanOut)).
func (w *weights) glorot(n, fanIn, fanOut int) []float32 {
	return w.normal(n, math.Sqrt(2/float64(fanIn+fanOut)))
}

// bias returns n small biases.
func (w *weights) bias(n int) []float32 {
	return w.normal(n, 0.01)
}

// batchNorm returns per-channel scale (uniform in gain·[0.75,1.25]), shift
// N(0, 0.01²), running mean N(0, 0.05²) and running variance uniform in
// [0.75,1.25].
func (w *weights) batchNorm(c int, gain float64) (scale, shift, mean, variance []float32) {
	scale = make([]float32, c)
	for i := range scale {
		scale[i] = float32(gain * (0.75 + 0.5*w.rng.Float64()))
	}
	shift = w.normal(c, 0.01)
	mean = w.normal(c, 0.05)
	variance = make([]float32, c)
	for i := range variance {
		variance[i] = float32(0.75 + 0.5*w.rng.Float64())
	}
	return scale, shift, mean, variance
}

// floatTensor encodes values as an FP32 TensorProto with little-endian
// raw_data.
func floatTensor(name string, dims []int64, values []float32) *onnxpb.TensorProto {
	raw := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return &onnxpb.TensorProto{
		Name:     name,
		Dims:     dims,
		DataType: int32(onnxpb.TensorProto_FLOAT),
		RawData:  raw,
	}
}
