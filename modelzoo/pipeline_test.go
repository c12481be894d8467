package modelzoo_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/onnxrt"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/modelzoo"
)

// TestPipelineModelsRun runs the detector-like model on two inputs and the
// classifier-like model on the objects it finds: 4 objects of 16 features
// per input, and 10 scores per object that add up to 1.
func TestPipelineModelsRun(t *testing.T) {
	initORT(t)
	in := make([]float32, 2*64)
	for i := range in {
		in[i] = float32(i%7) / 7
	}
	image, err := tensor.FromFloat32s("image", []int64{2, 64}, in)
	require.NoError(t, err)
	outs, err := onnxrt.Run(writeModel(t, modelzoo.DetectorModel, 1), map[string]tensor.Tensor{"image": image}, 1)
	require.NoError(t, err)
	objects := outs[0]
	require.Equal(t, []int64{2, modelzoo.PipelineObjects, 16}, objects.Shape)
	objects.Name, objects.Shape = "object", []int64{2 * modelzoo.PipelineObjects, 16}
	outs, err = onnxrt.Run(writeModel(t, modelzoo.ClassifierModel, 1), map[string]tensor.Tensor{"object": objects}, 1)
	require.NoError(t, err)
	require.Equal(t, []int64{2 * modelzoo.PipelineObjects, 10}, outs[0].Shape)
	scores, err := outs[0].Float32s()
	require.NoError(t, err)
	for r := range 2 * modelzoo.PipelineObjects {
		sum := float32(0)
		for _, s := range scores[r*10 : (r+1)*10] {
			sum += s
		}
		require.InDelta(t, 1, sum, 1e-5, "row %d", r)
	}
	require.NotEqual(t, scores[:10], scores[10:20], "objects differ")
	lite, err := onnxrt.Run(writeModel(t, modelzoo.LiteClassifierModel, 1), map[string]tensor.Tensor{"object": objects}, 1)
	require.NoError(t, err)
	require.Equal(t, outs[0].Shape, lite[0].Shape, "the variant gives the classifier's tensors")
}

// TestWritePipeline writes the pipeline as a Triton repository the
// repository reader serves: both models and the ensemble with its fan-out.
func TestWritePipeline(t *testing.T) {
	initORT(t)
	dir := t.TempDir()
	require.NoError(t, modelzoo.WritePipeline(dir, 1, "150ms", true))
	ix, err := repository.Scan(repository.Roots{dir}, repository.Options{Read: repository.ReadONNXInterface, Open: daemon.OpenInRuntime, DefaultSLO: 50 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, ix.Broken)
	require.Equal(t, []string{modelzoo.ClassifierModel, modelzoo.LiteClassifierModel, modelzoo.PipelineName, modelzoo.DetectorModel}, ix.Names())
	p, err := ix.Get(modelzoo.PipelineName)
	require.NoError(t, err)
	require.Equal(t, "objects", p.Config.Ensemble.Fanout)
	require.Equal(t, 150*time.Millisecond, p.Config.SLO.D())
	steps, err := p.CheckEnsemble(func(name string) *repository.Model { return ix.Models[name] })
	require.NoError(t, err)
	require.Len(t, steps, 2)
	_, err = os.Stat(filepath.Join(dir, modelzoo.PipelineName, "1"))
	require.NoError(t, err, "Triton's layout: an empty version folder")
	// The classifier's variant declares itself one and fits its step.
	lite := ix.Models[modelzoo.LiteClassifierModel]
	require.Equal(t, modelzoo.ClassifierModel, lite.Config.VariantOf)
	require.InDelta(t, modelzoo.LiteAccuracy, lite.Config.ModelAccuracy(), 0)
	require.True(t, lite.FitsStep(p.Config.Ensemble.Steps[1], steps[1]))
	require.Less(t, lite.Bytes, steps[1].Bytes, "the variant is the smaller graph")
}
