package engine

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo/onnxpb"
)

// half encodes a normal float32 that FP16 represents exactly, or zero.
func half(f float32) uint16 {
	if f == 0 {
		return 0
	}
	b := math.Float32bits(f)
	sign := uint16(b>>31) << 15
	exp := uint16(int((b>>23)&0xff)-127+15) << 10
	return sign | exp | uint16((b>>13)&0x3ff)
}

// le encodes values little-endian.
func le[T int64 | int32 | uint16](vals ...T) []byte {
	var out []byte
	for _, v := range vals {
		switch x := any(v).(type) {
		case int64:
			out = binary.LittleEndian.AppendUint64(out, uint64(x))
		case int32:
			out = binary.LittleEndian.AppendUint32(out, uint32(x))
		case uint16:
			out = binary.LittleEndian.AppendUint16(out, x)
		}
	}
	return out
}

func mustTensor(t *testing.T, name string, dt tensor.DataType, shape []int64, data []byte) tensor.Tensor {
	t.Helper()
	tt, err := tensor.New(name, dt, shape, data)
	require.NoError(t, err)
	return tt
}

func TestORTDataTypes(t *testing.T) {
	const (
		i64  = onnxpb.TensorProto_INT64
		i32  = onnxpb.TensorProto_INT32
		u8   = onnxpb.TensorProto_UINT8
		bl   = onnxpb.TensorProto_BOOL
		f16  = onnxpb.TensorProto_FLOAT16
		f32  = onnxpb.TensorProto_FLOAT
		rows = "N"
	)
	path := writeGraph(t, "types",
		[]value{{"a", i64, []any{rows, 3}}, {"b", i32, []any{rows, 3}}, {"c", u8, []any{rows, 2}}, {"d", bl, []any{rows, 2}}, {"h", f16, []any{rows, 4}}},
		[]value{{"a2", i64, []any{rows, 3}}, {"b2", i32, []any{rows, 3}}, {"c32", i32, []any{rows, 2}}, {"c8", u8, []any{rows, 2}},
			{"dn", bl, []any{rows, 2}}, {"hf", f32, []any{rows, 4}}, {"h2", f16, []any{rows, 4}}},
		op("Add", []string{"a", "a"}, "a2"),
		op("Mul", []string{"b", "b"}, "b2"),
		op("Cast", []string{"c"}, "c32", castTo(i32)),
		op("Identity", []string{"c"}, "c8"),
		op("Not", []string{"d"}, "dn"),
		op("Cast", []string{"h"}, "hf", castTo(f32)),
		op("Cast", []string{"hf"}, "h2", castTo(f16)),
	)
	m, err := newCPU(t, 1).Load(context.Background(), ModelSpec{Name: "types", Path: path, MaxBatchSize: 4})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	require.Equal(t, []TensorSpec{
		{Name: "a", DataType: tensor.Int64, Shape: []int64{3}},
		{Name: "b", DataType: tensor.Int32, Shape: []int64{3}},
		{Name: "c", DataType: tensor.Uint8, Shape: []int64{2}},
		{Name: "d", DataType: tensor.Bool, Shape: []int64{2}},
		{Name: "h", DataType: tensor.FP16, Shape: []int64{4}},
	}, m.Inputs())

	halves := func(fs ...float32) []byte {
		hs := make([]uint16, len(fs))
		for i, f := range fs {
			hs[i] = half(f)
		}
		return le(hs...)
	}
	type values struct {
		a  []int64
		b  []int32
		c  []byte
		d  []byte
		h  []float32
		hb []byte
	}
	reqVals := []values{
		{a: []int64{1, -2, 1 << 40}, b: []int32{3, -4, 5}, c: []byte{0, 255}, d: []byte{1, 0}, h: []float32{1, -2, 0.5, 100}},
		{a: []int64{7, 8, 9, -7, -8, -9}, b: []int32{1, 2, 3, 4, 5, 6}, c: []byte{1, 2, 3, 4}, d: []byte{0, 0, 1, 1},
			h: []float32{0, 1.5, 3.25, -0.125, 2, 4, 8, 16}},
	}
	reqs := make([][]tensor.Tensor, len(reqVals))
	for i, v := range reqVals {
		n := int64(len(v.a) / 3)
		reqVals[i].hb = halves(v.h...)
		reqs[i] = []tensor.Tensor{
			mustTensor(t, "h", tensor.FP16, []int64{n, 4}, reqVals[i].hb),
			mustTensor(t, "a", tensor.Int64, []int64{n, 3}, le(v.a...)),
			mustTensor(t, "b", tensor.Int32, []int64{n, 3}, le(v.b...)),
			mustTensor(t, "c", tensor.Uint8, []int64{n, 2}, v.c),
			mustTensor(t, "d", tensor.Bool, []int64{n, 2}, v.d),
		}
	}
	outs, info, err := m.Run(context.Background(), reqs, nil)
	require.NoError(t, err)
	require.Equal(t, 3, info.BatchSize)
	require.Equal(t, 1, info.Runs)

	for i, v := range reqVals {
		n := int64(len(v.a) / 3)
		a2, b2, c32 := make([]int64, len(v.a)), make([]int32, len(v.b)), make([]int32, len(v.c))
		for j := range v.a {
			a2[j] = 2 * v.a[j]
			b2[j] = v.b[j] * v.b[j]
		}
		dn := make([]byte, len(v.d))
		for j := range v.c {
			c32[j] = int32(v.c[j])
			dn[j] = 1 - v.d[j]
		}
		hf, err := tensor.FromFloat32s("hf", []int64{n, 4}, v.h)
		require.NoError(t, err)
		want := []tensor.Tensor{
			mustTensor(t, "a2", tensor.Int64, []int64{n, 3}, le(a2...)),
			mustTensor(t, "b2", tensor.Int32, []int64{n, 3}, le(b2...)),
			mustTensor(t, "c32", tensor.Int32, []int64{n, 2}, le(c32...)),
			mustTensor(t, "c8", tensor.Uint8, []int64{n, 2}, v.c),
			mustTensor(t, "dn", tensor.Bool, []int64{n, 2}, dn),
			hf,
			mustTensor(t, "h2", tensor.FP16, []int64{n, 4}, v.hb),
		}
		require.Len(t, outs[i], len(want))
		for k := range want {
			require.Equal(t, want[k].Name, outs[i][k].Name)
			require.Equal(t, want[k].DataType, outs[i][k].DataType, want[k].Name)
			require.Equal(t, want[k].Shape, outs[i][k].Shape, want[k].Name)
			require.Equal(t, want[k].Data, outs[i][k].Data, "request %d output %s", i, want[k].Name)
		}
	}
}

func TestORTOpenDims(t *testing.T) {
	const f32, i64, f16 = onnxpb.TensorProto_FLOAT, onnxpb.TensorProto_INT64, onnxpb.TensorProto_FLOAT16
	e := newCPU(t, 1)

	t.Run("runtime-allocated outputs, requests grouped by shape", func(t *testing.T) {
		path := writeGraph(t, "open",
			[]value{{"x", f32, []any{"N", "L"}}, {"k", i64, []any{"N", "L"}}},
			[]value{{"y", f32, []any{"N", "L"}}, {"k2", i64, []any{"N", "L"}}},
			op("Identity", []string{"x"}, "y"), op("Add", []string{"k", "k"}, "k2"))
		m, err := e.Load(context.Background(), ModelSpec{Name: "open", Path: path, MaxBatchSize: 8})
		require.NoError(t, err)
		defer func() { require.NoError(t, m.Close()) }()
		require.Equal(t, []int64{-1}, m.Outputs()[0].Shape)

		shapes := [][]int64{{1, 3}, {2, 5}, {2, 3}}
		reqs := make([][]tensor.Tensor, len(shapes))
		for i, s := range shapes {
			n := s[0] * s[1]
			xs := make([]float32, n)
			ks := make([]int64, n)
			for j := range xs {
				xs[j] = float32(100*i + j)
				ks[j] = int64(100*i + j)
			}
			x, err := tensor.FromFloat32s("x", s, xs)
			require.NoError(t, err)
			reqs[i] = []tensor.Tensor{x, mustTensor(t, "k", tensor.Int64, s, le(ks...))}
		}
		outs, info, err := m.Run(context.Background(), reqs, []string{"k2", "y"})
		require.NoError(t, err)
		require.Equal(t, 2, info.Runs, "[*,3] together, [*,5] alone")
		require.Equal(t, 5, info.BatchSize)
		for i, req := range reqs {
			require.Equal(t, "k2", outs[i][0].Name)
			require.Equal(t, req[1].Shape, outs[i][0].Shape)
			require.Equal(t, req[0].Shape, outs[i][1].Shape)
			require.Equal(t, req[0].Data, outs[i][1].Data, "identity of request %d", i)
			for j := 0; j < len(req[1].Data); j += 8 {
				in := int64(binary.LittleEndian.Uint64(req[1].Data[j:]))
				require.Equal(t, 2*in, int64(binary.LittleEndian.Uint64(outs[i][0].Data[j:])))
			}
		}
	})

	t.Run("FP16 output with open dims", func(t *testing.T) {
		path := writeGraph(t, "open16",
			[]value{{"h", f16, []any{"N", "L"}}}, []value{{"h2", f16, []any{"N", "L"}}},
			op("Identity", []string{"h"}, "h2"))
		m, err := e.Load(context.Background(), ModelSpec{Name: "open16", Path: path, MaxBatchSize: 8})
		require.NoError(t, err)
		defer func() { require.NoError(t, m.Close()) }()
		in := mustTensor(t, "h", tensor.FP16, []int64{1, 3}, le(half(1.5), half(-3), half(0.25)))
		outs, _, err := m.Run(context.Background(), [][]tensor.Tensor{{in}}, nil)
		require.NoError(t, err)
		require.Equal(t, in.Shape, outs[0][0].Shape)
		require.Equal(t, in.Data, outs[0][0].Data, "two bytes per element, copied whole")
	})

	t.Run("configured dims are enforced", func(t *testing.T) {
		path := writeGraph(t, "open16c",
			[]value{{"h", f16, []any{"N", "L"}}}, []value{{"h2", f16, []any{"N", "L"}}},
			op("Identity", []string{"h"}, "h2"))
		m, err := e.Load(context.Background(), ModelSpec{Name: "open16c", Path: path, MaxBatchSize: 8,
			Inputs:  []TensorSpec{{Name: "h", DataType: tensor.FP16, Shape: []int64{2}}},
			Outputs: []TensorSpec{{Name: "h2", DataType: tensor.FP16, Shape: []int64{2}}}})
		require.NoError(t, err)
		defer func() { require.NoError(t, m.Close()) }()
		require.Equal(t, []int64{2}, m.Inputs()[0].Shape)
		err = m.Validate([]tensor.Tensor{mustTensor(t, "h", tensor.FP16, []int64{1, 3}, make([]byte, 6))})
		require.ErrorIs(t, err, ErrInvalidInput, "the configured dim is enforced")
	})
}

func TestORTFixedShapeModelWithoutBatching(t *testing.T) {
	const f32 = onnxpb.TensorProto_FLOAT
	path := writeGraph(t, "fixed", []value{{"x", f32, []any{1, 3}}}, []value{{"y", f32, []any{1, 3}}},
		op("Add", []string{"x", "x"}, "y"))
	e := newCPU(t, 1)
	_, err := e.Load(context.Background(), ModelSpec{Name: "fixed", Path: path, MaxBatchSize: 4})
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, `dimension 0 of input "x" is fixed at 1, so it cannot batch; set max_batch_size 0`)

	m, err := e.Load(context.Background(), ModelSpec{Name: "fixed", Path: path})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	x, err := tensor.FromFloat32s("x", []int64{1, 3}, []float32{1, 2, 3})
	require.NoError(t, err)
	outs, info, err := m.Run(context.Background(), [][]tensor.Tensor{{x}, {x}}, nil)
	require.NoError(t, err)
	require.Equal(t, 2, info.Runs)
	for _, o := range outs {
		got, err := o[0].Float32s()
		require.NoError(t, err)
		require.Equal(t, []float32{2, 4, 6}, got)
	}
}
