package modelzoo_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/gpulet/gpuletd/modelzoo"
)

// BenchmarkBuildResNet18 measures building the ResNet-18-style graph with
// fresh random weights and serializing it.
func BenchmarkBuildResNet18(b *testing.B) {
	b.ReportAllocs()
	size := 0
	for b.Loop() {
		raw, err := modelzoo.BuildBytes("resnet18", 1)
		if err != nil {
			b.Fatal(err)
		}
		size = len(raw)
	}
	b.ReportMetric(float64(size)/1e6, "MB/file")
}

// BenchmarkInferCPU measures one ONNX Runtime CPU inference of a batch per
// iteration, with 2 intra-op threads (every core of the 2-vCPU development
// machine) and one session reused across iterations. These latencies set
// the demo repository's SLOs (2x batch 8, rounded up; see registry.go).
func BenchmarkInferCPU(b *testing.B) {
	initORT(b)
	for _, name := range []string{"resnet18", "lenet5", "vgg", "mlp"} {
		for _, batch := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/batch=%d", name, batch), func(b *testing.B) {
				benchInfer(b, name, batch)
			})
		}
	}
}

func benchInfer(b *testing.B, name string, batch int) {
	m, err := modelzoo.Lookup(name)
	require.NoError(b, err)
	path := writeModel(b, name, 1)

	opts, err := ort.NewSessionOptions()
	require.NoError(b, err)
	defer func() { _ = opts.Destroy() }()
	require.NoError(b, opts.SetIntraOpNumThreads(2))
	require.NoError(b, opts.SetInterOpNumThreads(1))
	sess, err := ort.NewDynamicAdvancedSession(path, []string{m.InputName}, []string{m.OutputName}, opts)
	require.NoError(b, err)
	defer func() { _ = sess.Destroy() }()

	in := randomInput(m, batch, 1)
	input, err := ort.NewTensor(ort.NewShape(in.Shape...), in.Data)
	require.NoError(b, err)
	defer func() { _ = input.Destroy() }()
	output, err := ort.NewEmptyTensor[float32](ort.NewShape(append([]int64{int64(batch)}, m.OutputShape[1:]...)...))
	require.NoError(b, err)
	defer func() { _ = output.Destroy() }()

	inputs, outputs := []ort.Value{input}, []ort.Value{output}
	require.NoError(b, sess.Run(inputs, outputs)) // warm-up: first run allocates
	for b.Loop() {
		if err := sess.Run(inputs, outputs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "samples/s")
}
