package engine

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// With fixed shapes a batch runs padded to the next of the model's sizes on
// that size's own session, and every request gets the answer the plain
// engine gives it.
func TestFixedShapesPadBatches(t *testing.T) {
	initORT(t)
	plain := newCPU(t, 1)
	fixed, err := NewORT(ORTOptions{IntraOpThreads: 1, FixedShapes: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, fixed.Close()) })

	tests := []struct {
		model    string
		maxBatch int
		pads     map[int]int
		sessions int // after running every size 1..maxBatch
	}{
		{"lenet5", 6, map[int]int{1: 1, 2: 2, 3: 4, 4: 4, 5: 6, 6: 6}, 4},
		{"mlp16", 8, map[int]int{1: 1, 3: 4, 5: 8, 8: 8}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.model, func(t *testing.T) {
			path := zooModel(t, tc.model)
			spec := ModelSpec{Name: tc.model, Path: path, MaxBatchSize: tc.maxBatch}
			want, err := plain.Load(context.Background(), spec)
			require.NoError(t, err)
			defer func() { require.NoError(t, want.Close()) }()
			got, err := fixed.Load(context.Background(), spec)
			require.NoError(t, err)
			defer func() { require.NoError(t, got.Close()) }()
			om := got.(*ortModel)
			require.NotNil(t, om.shapes)
			require.Equal(t, 1, om.shapes.count(), "one session until a batch needs another size")
			for n, p := range tc.pads {
				require.Equal(t, p, om.PaddedBatch(n), "batch of %d", n)
			}
			require.Equal(t, 3, want.(*ortModel).PaddedBatch(3), "without fixed shapes nothing is padded")

			rng := rand.New(rand.NewPCG(3, uint64(tc.maxBatch)))
			for n := 1; n <= tc.maxBatch; n++ {
				reqs := randomRequests(t, got.Inputs(), n, rng)
				w, _, err := want.Run(context.Background(), reqs, nil)
				require.NoError(t, err)
				g, info, err := got.Run(context.Background(), reqs, nil)
				require.NoError(t, err)
				require.Equal(t, 1, info.Runs)
				require.Len(t, g, n)
				for r := range g {
					require.Len(t, g[r], len(w[r]))
					for k := range g[r] {
						require.Equal(t, w[r][k].Shape, g[r][k].Shape, "request %d output %s", r, w[r][k].Name)
						requireClose(t, w[r][k], g[r][k])
					}
				}
			}
			require.Equal(t, tc.sessions, om.shapes.count())
		})
	}
}

// A closed model's sessions are gone: a run says so instead of opening one.
func TestFixedShapesClosed(t *testing.T) {
	om := fixedLenet5(t)
	require.NoError(t, om.Close())
	_, _, err := om.shapes.session(4)
	require.ErrorIs(t, err, ErrClosed)
}

// A batch size whose session is still opening holds up no other size: a
// retuned model's new sizes open while its open ones serve.
func TestFixedShapesOpenBesideRuns(t *testing.T) {
	m := fixedLenet5(t)
	defer func() { require.NoError(t, m.Close()) }()
	open := m.shapes.open
	opening, gate := make(chan struct{}), make(chan struct{})
	m.shapes.open = func() (*onnxrt.Session, error) {
		close(opening)
		<-gate
		return open()
	}
	rng := rand.New(rand.NewPCG(4, 4))
	four, one := randomRequests(t, m.Inputs(), 4, rng), randomRequests(t, m.Inputs(), 1, rng)
	ranFour := make(chan error, 1)
	go func() {
		_, _, err := m.Run(context.Background(), four, nil)
		ranFour <- err
	}()
	<-opening
	ranOne := make(chan error, 1)
	go func() {
		_, _, err := m.Run(context.Background(), one, nil)
		ranOne <- err
	}()
	select {
	case err := <-ranOne:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		close(gate)
		t.Fatal("a batch of one waited for the session of batches of four to open")
	}
	require.Equal(t, 1, m.shapes.count(), "batches of four still wait for their session")
	close(gate)
	require.NoError(t, <-ranFour)
	require.Equal(t, 2, m.shapes.count())
}

// Opening a batch size's session at its first run is set-up, not the
// dispatch overhead the scheduler adds to every batch: on a GPU a warm-up
// that counted it had every batch of lenet5 predicted 6 ms longer.
func TestFixedShapesSetupIsNotOverhead(t *testing.T) {
	m := fixedLenet5(t)
	defer func() { require.NoError(t, m.Close()) }()
	const slowOpen = 300 * time.Millisecond
	open := m.shapes.open
	m.shapes.open = func() (*onnxrt.Session, error) {
		time.Sleep(slowOpen)
		return open()
	}
	res, err := m.Warmup(context.Background(), []int{1, 2, 4})
	require.NoError(t, err)
	require.Len(t, res.Batches, 3)
	require.Zero(t, res.Batches[0].Setup, "batches of one run on the session open since the load")
	for _, b := range res.Batches[1:] {
		require.GreaterOrEqual(t, b.Setup, slowOpen, "batch %d opened its session", b.Batch)
		require.Less(t, b.Overhead, slowOpen, "batch %d", b.Batch)
	}
	_, info, err := m.Run(context.Background(), randomRequests(t, m.Inputs(), 3, rand.New(rand.NewPCG(5, 5))), nil)
	require.NoError(t, err)
	require.Zero(t, info.Setup, "a size warmed up opens nothing")
}

// fixedLenet5 loads lenet5 (largest batch 4) with fixed shapes, one
// session per padded size.
func fixedLenet5(t *testing.T) *ortModel {
	t.Helper()
	initORT(t)
	fixed, err := NewORT(ORTOptions{IntraOpThreads: 1, FixedShapes: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, fixed.Close()) })
	m, err := fixed.Load(context.Background(), ModelSpec{Name: "lenet5", Path: zooModel(t, "lenet5"), MaxBatchSize: 4})
	require.NoError(t, err)
	return m.(*ortModel)
}

// randomRequests makes n one-row requests of random values for inputs (FP32
// or FP16, every dim fixed).
func randomRequests(t *testing.T, inputs []TensorSpec, n int, rng *rand.Rand) [][]tensor.Tensor {
	t.Helper()
	reqs := make([][]tensor.Tensor, n)
	for r := range reqs {
		for _, spec := range inputs {
			shape := append([]int64{1}, spec.Shape...)
			x, err := tensor.Zeros(spec.Name, spec.DataType, shape)
			require.NoError(t, err)
			size := spec.DataType.Size()
			for i := 0; i+size <= len(x.Data); i += size {
				v := rng.Float32() - 0.5
				switch spec.DataType {
				case tensor.FP32:
					binary.LittleEndian.PutUint32(x.Data[i:], math.Float32bits(v))
				case tensor.FP16:
					binary.LittleEndian.PutUint16(x.Data[i:], float16(v))
				default:
					t.Fatalf("input %s: no random %s values", spec.Name, spec.DataType)
				}
			}
			reqs[r] = append(reqs[r], x)
		}
	}
	return reqs
}

// requireClose compares two outputs element by element (FP32, FP16 and
// BF16) to a relative 1e-3.
func requireClose(t *testing.T, want, got tensor.Tensor) {
	t.Helper()
	require.Equal(t, want.DataType, got.DataType)
	require.Len(t, got.Data, len(want.Data))
	size := want.DataType.Size()
	for i := 0; i+size <= len(want.Data); i += size {
		w, g := floatAt(t, want, i), floatAt(t, got, i)
		require.InDelta(t, w, g, 1e-3*max(1, math.Abs(w)), "%s element %d", want.Name, i/size)
	}
}

func floatAt(t *testing.T, x tensor.Tensor, i int) float64 {
	t.Helper()
	switch x.DataType {
	case tensor.FP32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(x.Data[i:])))
	case tensor.FP16:
		return halfToFloat(binary.LittleEndian.Uint16(x.Data[i:]))
	case tensor.BF16:
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(x.Data[i:])) << 16))
	}
	t.Fatalf("output %s: cannot compare %s", x.Name, x.DataType)
	return 0
}

// float16 rounds v (|v| < 65504, normal or zero) to IEEE half precision by
// truncation; halfToFloat reads one back.
func float16(v float32) uint16 {
	b := math.Float32bits(v)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	if exp <= 0 {
		return sign // too small for a normal half: zero
	}
	return sign | uint16(exp)<<10 | uint16((b>>13)&0x3ff)
}

func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	if exp == 0 {
		return sign * frac / 1024 * math.Pow(2, -14)
	}
	return sign * (1 + frac/1024) * math.Pow(2, float64(exp-15))
}
