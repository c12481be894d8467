package kserve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// The values of an answer are formatted as encoding/json formats the
// slices they widen to: clients see the same text as before the answer
// was formatted in slices.
func TestJSONValuesAsEncodingJSONWritesThem(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	// Floats at the edges of the formats: zeros, the bounds of the
	// exponent form, subnormals, the largest finite values, and random
	// bit patterns with NaN and infinity left out.
	f32 := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.1, 1e-6, 9.999999e-7, 1.0000001e-6, 1e21, 9.999999e20, 1e20,
		math.MaxFloat32, math.SmallestNonzeroFloat32, -3.4028233e38, 123456789, 1e-7, 1.5e-45}
	f64 := []float64{0, math.Copysign(0, -1), 1e-6, 9.999999999999999e-7, 1e21, 9.999999999999999e20, math.MaxFloat64,
		math.SmallestNonzeroFloat64, 0.1, 1.0 / 3}
	for len(f32) < 5000 {
		if f := math.Float32frombits(rng.Uint32()); !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
			f32 = append(f32, f)
		}
	}
	for len(f64) < 5000 {
		if f := math.Float64frombits(rng.Uint64()); !math.IsNaN(f) && !math.IsInf(f, 0) {
			f64 = append(f64, f)
		}
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	finiteHalves := func(n int, expMask uint16) []byte {
		var b []byte
		for len(b) < 2*n {
			if h := uint16(rng.Uint32()); h&expMask != expMask {
				b = binary.LittleEndian.AppendUint16(b, h)
			}
		}
		return b
	}
	var f32b, f64b []byte
	for _, f := range f32 {
		f32b = binary.LittleEndian.AppendUint32(f32b, math.Float32bits(f))
	}
	for _, f := range f64 {
		f64b = binary.LittleEndian.AppendUint64(f64b, math.Float64bits(f))
	}
	bools := random(300)
	bools[0], bools[1] = 0, 1
	cases := []struct {
		dt   tensor.DataType
		data []byte
	}{
		{tensor.FP32, f32b},
		{tensor.FP64, f64b},
		{tensor.FP16, finiteHalves(3000, 0x7c00)},
		{tensor.BF16, finiteHalves(3000, 0x7f80)},
		{tensor.Bool, bools},
		{tensor.Int8, random(1000)},
		{tensor.Int16, random(2000)},
		{tensor.Int32, random(4000)},
		{tensor.Int64, append(random(8000), le64(math.MinInt64, math.MaxInt64, -1, 0)...)},
		{tensor.Uint8, random(1000)},
		{tensor.Uint16, random(2000)},
		{tensor.Uint32, random(4000)},
		{tensor.Uint64, append(random(8000), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)},
		{tensor.FP32, nil},
	}
	for _, tc := range cases {
		t.Run(string(tc.dt), func(t *testing.T) {
			n := len(tc.data) / tc.dt.Size()
			x := tensor.Tensor{Name: "x", DataType: tc.dt, Shape: []int64{int64(n)}, Data: tc.data}
			want, err := json.Marshal(widened(t, x))
			require.NoError(t, err)
			require.NoError(t, checkJSONValues(x))
			got := append(appendJSONValues([]byte{'['}, x, 0, n), ']')
			require.Equal(t, string(want), string(got))
		})
	}
}

func TestJSONValuesRefuseNaNAndInfinity(t *testing.T) {
	cases := []struct {
		dt   tensor.DataType
		data []byte
	}{
		{tensor.FP32, binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.Inf(1))))},
		{tensor.FP32, binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.NaN())))},
		{tensor.FP64, binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.Inf(-1)))},
		{tensor.FP16, []byte{0x00, 0x7c}},
		{tensor.FP16, []byte{0x01, 0xfe}},
		{tensor.BF16, []byte{0x80, 0x7f}},
		{tensor.BF16, []byte{0xc1, 0xff}},
	}
	for _, tc := range cases {
		// A finite zero, then the value JSON cannot carry.
		x := tensor.Tensor{Name: "x", DataType: tc.dt, Shape: []int64{2}, Data: append(make([]byte, tc.dt.Size()), tc.data...)}
		require.ErrorIs(t, checkJSONValues(x), ErrNotJSON, "%s % x", tc.dt, tc.data)
	}
}

// writeSizes records the size of every write.
type writeSizes struct {
	bytes.Buffer
	sizes []int
}

func (w *writeSizes) Write(p []byte) (int, error) {
	w.sizes = append(w.sizes, len(p))
	return w.Buffer.Write(p)
}

// A large answer is written in slices, never formatted whole, and reads
// back as the values it holds.
func TestALargeAnswerIsWrittenInSlices(t *testing.T) {
	vals := make([]float32, 1<<20)
	for i := range vals {
		vals[i] = float32(i) / 7
	}
	x := mustF32(t, "x", []int64{1, int64(len(vals))}, vals...)
	small := mustF32(t, "s", []int64{1}, 2)
	r, err := EncodeResponse(InferResponseJSON{ModelName: "m"}, []Output{{Tensor: small}, {Tensor: x}})
	require.NoError(t, err)
	require.Equal(t, int64(len(vals)+1), r.values, "values left to format as they are written")
	var w writeSizes
	n, err := r.WriteTo(&w)
	require.NoError(t, err)
	require.Equal(t, int64(w.Len()), n)
	require.Greater(t, len(w.sizes), 50)
	require.Less(t, w.Len(), 15*len(vals))
	for _, s := range w.sizes {
		require.Less(t, s, 200<<10)
	}
	var got struct {
		Outputs []struct {
			Name string    `json:"name"`
			Data []float32 `json:"data"`
		} `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal(w.Bytes(), &got))
	require.Len(t, got.Outputs, 2)
	require.Equal(t, []float32{2}, got.Outputs[0].Data)
	require.Equal(t, vals, got.Outputs[1].Data)
}

// widened is x's values read with encoding/binary, independently of the
// encoder, widened as the answer carries them: integers to int64 or uint64
// (encoding/json writes a []uint8 as base64), halves to float32.
func widened(t *testing.T, x tensor.Tensor) any {
	t.Helper()
	read := func(into any) {
		require.NoError(t, binary.Read(bytes.NewReader(x.Data), binary.LittleEndian, into))
	}
	n := len(x.Data) / x.DataType.Size()
	widen := func(get func(i int) any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = get(i)
		}
		return out
	}
	switch x.DataType {
	case tensor.Bool:
		v := make([]bool, n)
		read(v)
		return v
	case tensor.FP32:
		v := make([]float32, n)
		read(v)
		return v
	case tensor.FP64:
		v := make([]float64, n)
		read(v)
		return v
	case tensor.FP16, tensor.BF16:
		v := make([]uint16, n)
		read(v)
		return widen(func(i int) any {
			if x.DataType == tensor.FP16 {
				return halfToFloat32(v[i])
			}
			return math.Float32frombits(uint32(v[i]) << 16)
		})
	case tensor.Int8:
		v := make([]int8, n)
		read(v)
		return widen(func(i int) any { return int64(v[i]) })
	case tensor.Int16:
		v := make([]int16, n)
		read(v)
		return widen(func(i int) any { return int64(v[i]) })
	case tensor.Int32:
		v := make([]int32, n)
		read(v)
		return widen(func(i int) any { return int64(v[i]) })
	case tensor.Int64:
		v := make([]int64, n)
		read(v)
		return v
	case tensor.Uint8:
		v := make([]uint8, n)
		read(v)
		return widen(func(i int) any { return uint64(v[i]) })
	case tensor.Uint16:
		v := make([]uint16, n)
		read(v)
		return widen(func(i int) any { return uint64(v[i]) })
	case tensor.Uint32:
		v := make([]uint32, n)
		read(v)
		return widen(func(i int) any { return uint64(v[i]) })
	}
	v := make([]uint64, n)
	read(v)
	return v
}
