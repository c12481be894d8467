package repository

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/executor/tensor"
)

// A pipeline's tensors must fit where they go, as Triton checks an
// ensemble's: a step's input against the pipeline's input or what another
// step writes (a row of the fan-out), a pipeline's output against what its
// step writes (a row per object after the fan-out). Such a pipeline was
// served before and refused every request at its step, 400 for a request
// its own metadata asked for.
func TestCheckEnsembleShapes(t *testing.T) {
	spec := func(name string, dims ...int64) []TensorSpec {
		return []TensorSpec{{Name: name, DataType: tensor.FP32, Dims: dims}}
	}
	tests := []struct {
		name string
		edit func(p, det, cls *Model)
		want string // "" fits
	}{
		{"fits", func(p, det, cls *Model) {}, ""},
		{"unknown dims fit", func(p, det, cls *Model) { det.Inputs[0].Dims, cls.Outputs[0].Dims = nil, nil }, ""},
		{"a dynamic dimension fits", func(p, det, cls *Model) { det.Inputs[0].Dims = []int64{-1} }, ""},
		{"a classifier that does not batch takes a row", func(p, det, cls *Model) { cls.Config.MaxBatchSize = 0 }, ""},
		{"a pipeline without a batch dimension cuts its rows along the first", func(p, det, cls *Model) {
			p.Config.MaxBatchSize = 0
			p.Inputs[0].Dims = []int64{1, 64}
			p.Outputs = append(spec("objects", 1, 4, 16), spec("labels", -1, 10)...)
		}, `input "crop" is [N 16] but "objects" is [1 4 16]`},
		{"a pipeline without a batch dimension over a detector without one", func(p, det, cls *Model) {
			p.Config.MaxBatchSize, det.Config.MaxBatchSize = 0, 0
			p.Inputs[0].Dims, det.Inputs[0].Dims = []int64{1, 64}, []int64{1, 64}
			p.Outputs = append(spec("objects", 4, 16), spec("labels", -1, 10)...)
			det.Outputs[0].Dims = []int64{4, 16}
		}, ""},
		{"the pipeline's input", func(p, det, cls *Model) { p.Inputs[0].Dims = []int64{32} },
			`step[0] (detector): input "image" is [N 64] but "image" is [N 32] (the pipeline's input)`},
		{"a row of the fan-out", func(p, det, cls *Model) { cls.Inputs[0].Dims = []int64{8} },
			`step[1] (classifier): input "crop" is [N 8] but "objects" is [1 16] (a row of what step[0] (detector) writes)`},
		{"a row for a model that does not batch", func(p, det, cls *Model) {
			cls.Config.MaxBatchSize = 0
			cls.Inputs[0].Dims = []int64{1, 16}
		}, `input "crop" is [1 16] but "objects" is [16]`},
		{"a row reads the image whole", func(p, det, cls *Model) {
			p.Config.Ensemble.Steps[1].Inputs["frame"] = "image"
			cls.Inputs = append(cls.Inputs, spec("frame", 64)...)
		}, ""},
		{"a row reads an image that does not fit", func(p, det, cls *Model) {
			p.Config.Ensemble.Steps[1].Inputs["frame"] = "image"
			cls.Inputs = append(cls.Inputs, spec("frame", 32)...)
		}, `step[1] (classifier): input "frame" is [N 32] but "image" is [N 64] (the pipeline's input)`},
		{"an output before the fan-out", func(p, det, cls *Model) { p.Outputs[0].Dims = []int64{5, 16} },
			`output "objects" is declared [N 5 16] but is [N 4 16] (what step[0] (detector) writes)`},
		{"an output of the rows", func(p, det, cls *Model) { p.Outputs[1].Dims = []int64{10} },
			`output "labels" is declared [N 10] but is [N -1 10] (what step[1] (classifier) writes)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &Model{Name: "p", Inputs: spec("image", 64), Outputs: append(spec("objects", 4, 16), spec("labels", -1, 10)...),
				Config: ModelConfig{MaxBatchSize: 1, Ensemble: &Ensemble{Fanout: "objects", FanoutStep: 1, FanoutWriter: 0, Steps: []EnsembleStep{
					{Model: "detector", Inputs: map[string]string{"image": "image"}, Outputs: map[string]string{"objects": "objects"}},
					{Model: "classifier", At: 1, Inputs: map[string]string{"crop": "objects"}, Outputs: map[string]string{"scores": "labels"}, Needs: []int{0}},
				}}}}
			det := &Model{Name: "detector", Inputs: spec("image", 64), Outputs: spec("objects", 4, 16), Config: ModelConfig{MaxBatchSize: 8}}
			cls := &Model{Name: "classifier", Inputs: spec("crop", 16), Outputs: spec("scores", 10), Config: ModelConfig{MaxBatchSize: 32}}
			tc.edit(p, det, cls)
			models := map[string]*Model{"detector": det, "classifier": cls}
			_, err := p.CheckEnsemble(func(name string) *Model { return models[name] })
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrEnsemble)
			require.ErrorContains(t, err, tc.want)
		})
	}
}
