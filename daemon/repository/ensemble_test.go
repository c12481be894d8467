package repository

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/stretchr/testify/require"
)

// trafficEnsemble is a detector whose boxes each go to a classifier.
const trafficEnsemble = `name: "traffic"
platform: "ensemble"
max_batch_size: 1
input [ { name: "image", data_type: TYPE_FP32, dims: [ 3, 32, 32 ] } ]
output [ { name: "labels", data_type: TYPE_FP32, dims: [ -1, 10 ] } ]
parameters { key: "slo" value { string_value: "250ms" } }
parameters { key: "fanout" value { string_value: "boxes" } }
ensemble_scheduling {
  step [
    { model_name: "detector", model_version: -1, input_map { key: "image" value: "image" }, output_map { key: "crops" value: "boxes" } },
    { model_name: "classifier", model_version: -1, input_map { key: "crop" value: "boxes" }, output_map { key: "scores" value: "labels" } }
  ]
}
`

func TestEnsembleParses(t *testing.T) {
	root := writeRepo(t, map[string]entry{"traffic": pbtxtEntry(trafficEnsemble, map[string]string{"1/.keep": ""})})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader})
	require.NoError(t, err)
	require.Empty(t, ix.Broken)
	m, err := ix.Get("traffic")
	require.NoError(t, err)
	require.Equal(t, PlatformEnsemble, m.Platform)
	require.Equal(t, 250*time.Millisecond, m.Config.SLO.D())
	require.Empty(t, m.File)
	require.Equal(t, []TensorSpec{{Name: "image", DataType: tensor.FP32, Dims: []int64{3, 32, 32}}}, m.Inputs)
	e := m.Config.Ensemble
	require.NotNil(t, e)
	require.Equal(t, "boxes", e.Fanout)
	require.Equal(t, 1, e.FanoutStep)
	require.Equal(t, []EnsembleStep{
		{Model: "detector", Inputs: map[string]string{"image": "image"}, Outputs: map[string]string{"crops": "boxes"}},
		{Model: "classifier", Inputs: map[string]string{"crop": "boxes"}, Outputs: map[string]string{"scores": "labels"}, At: 1, Needs: []int{0}},
	}, e.Steps)
	require.Equal(t, 0, e.FanoutWriter)
	require.False(t, e.Branches(), "a chain")
	require.Equal(t, "detector", e.Steps[0].StepKey())
	require.Zero(t, m.Config.MinAccuracy, "no floor unless given")

	// An accuracy floor.
	root = writeRepo(t, map[string]entry{"traffic": pbtxtEntry(trafficEnsemble+`parameters { key: "min_accuracy" value { string_value: "0.9" } }`+"\n", nil)})
	ix, err = Scan(Roots{root}, Options{Read: fakeReader})
	require.NoError(t, err)
	m, err = ix.Get("traffic")
	require.NoError(t, err)
	require.InDelta(t, 0.9, m.Config.MinAccuracy, 1e-12)

	// A table of end-to-end accuracies by path.
	root = writeRepo(t, map[string]entry{"traffic": pbtxtEntry(trafficEnsemble+`parameters { key: "path_accuracy" value { string_value: "detector/classifier=1, detector/classifier-lite = 0.82" } }`+"\n", nil)})
	ix, err = Scan(Roots{root}, Options{Read: fakeReader})
	require.NoError(t, err)
	m, err = ix.Get("traffic")
	require.NoError(t, err)
	require.Equal(t, map[string]float64{"detector/classifier": 1, "detector/classifier-lite": 0.82}, m.Config.PathAccuracy)

	// A pipeline may keep its answers in the response cache, as Triton's
	// ensembles do.
	root = writeRepo(t, map[string]entry{"traffic": pbtxtEntry(trafficEnsemble+"response_cache { enable: true }\n", nil)})
	ix, err = Scan(Roots{root}, Options{Read: fakeReader})
	require.NoError(t, err)
	m, err = ix.Get("traffic")
	require.NoError(t, err)
	require.True(t, m.Config.ResponseCache)
	require.NotContains(t, strings.Join(m.Notes, "\n"), "response_cache")

	// Without a version folder too: a pipeline has no file.
	root = writeRepo(t, map[string]entry{"traffic": pbtxtEntry(trafficEnsemble, nil)})
	ix, err = Scan(Roots{root}, Options{Read: fakeReader})
	require.NoError(t, err)
	require.Equal(t, []string{"traffic"}, ix.Names())
}

func TestEnsembleBadConfigs(t *testing.T) {
	edit := func(old, new string) string { return strings.Replace(trafficEnsemble, old, new, 1) }
	tests := []struct {
		name  string
		pbtxt string
		wants []string
	}{
		{"reads an unknown tensor", edit(`key: "crop" value: "boxes"`, `key: "crop" value: "objects"`), []string{"step[1].input_map[\"crop\"]", `"objects"`, "nor written by any step"}},
		{"output nobody writes", edit(`value: "labels" }`, `value: "classes" }`), []string{`output[0]: "labels"`, "no step"}},
		{"two writers", edit(`output_map { key: "scores" value: "labels" }`, `output_map { key: "scores" value: "boxes" }`), []string{`"boxes" is already given by step[0]`}},
		{"fan-out unknown", edit(`string_value: "boxes"`, `string_value: "crops"`), []string{`parameters["fanout"]: "crops" is no tensor`}},
		{"fan-out is an input", edit(`string_value: "boxes"`, `string_value: "image"`), []string{`"image" is an input of the pipeline`}},
		{"fan-out with batches", edit("max_batch_size: 1", "max_batch_size: 8"), []string{"max_batch_size: 8", "one request at a time"}},
		{"no steps", strings.Split(trafficEnsemble, "ensemble_scheduling")[0], []string{"ensemble_scheduling with at least one step"}},
		{"bad step name", edit(`model_name: "detector"`, `model_name: "../detector"`), []string{`step[0].model_name: "../detector"`}},
		{"path too short", trafficEnsemble + `parameters { key: "path_accuracy" value { string_value: "detector=0.9" } }` + "\n", []string{`path "detector" names 1 models for 2 steps`}},
		{"path accuracy above 1", trafficEnsemble + `parameters { key: "path_accuracy" value { string_value: "a/b=1.5" } }` + "\n", []string{`"a/b=1.5": the accuracy is not a share in [0, 1]`}},
		{"path not a pair", trafficEnsemble + `parameters { key: "path_accuracy" value { string_value: "a/b" } }` + "\n", []string{`"a/b" is not path=accuracy`}},
		{"path twice", trafficEnsemble + `parameters { key: "path_accuracy" value { string_value: "a/b=0.5,a/b=0.6" } }` + "\n", []string{`path "a/b" is given twice`}},
		{"path bad name", trafficEnsemble + `parameters { key: "path_accuracy" value { string_value: "a/../b=0.5" } }` + "\n", []string{`".." is not a model name`}},
		{"floor above 1", trafficEnsemble + `parameters { key: "min_accuracy" value { string_value: "1.2" } }` + "\n", []string{`parameters["min_accuracy"]: "1.2" is not an accuracy floor`}},
		{"no slo", edit(`parameters { key: "slo" value { string_value: "250ms" } }`, ""), []string{"slo: missing"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeRepo(t, map[string]entry{"traffic": pbtxtEntry(tc.pbtxt, nil)})
			ix, err := Scan(Roots{root}, Options{Read: fakeReader})
			require.NoError(t, err)
			require.Empty(t, ix.Names())
			require.Len(t, ix.Broken, 1)
			for _, w := range tc.wants {
				require.Contains(t, onlyProblem(ix).Error(), w)
			}
		})
	}
	// A model may not fan out or have steps.
	v1 := map[string]string{"1/model.onnx": "onnx"}
	root := writeRepo(t, map[string]entry{
		"a": pbtxtEntry(strings.Replace(tritonLenet, `"bad"`, `"a"`, 1)+`parameters { key: "fanout" value { string_value: "output" } }`+"\n", v1),
		"b": pbtxtEntry(strings.Replace(tritonLenet, `"bad"`, `"b"`, 1)+"ensemble_scheduling { step [ { model_name: \"a\" } ] }\n", v1),
		"c": pbtxtEntry(strings.Replace(tritonLenet, `"bad"`, `"c"`, 1)+`parameters { key: "min_accuracy" value { string_value: "0.9" } }`+"\n", v1),
	})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	require.ErrorContains(t, ix.Broken["a"], "only a pipeline")
	require.ErrorContains(t, ix.Broken["b"], "only a pipeline has steps")
	require.ErrorContains(t, ix.Broken["c"], "only a pipeline (platform: \"ensemble\") has an accuracy floor")
}

func TestCheckEnsemble(t *testing.T) {
	root := writeRepo(t, map[string]entry{"traffic": pbtxtEntry(trafficEnsemble, nil)})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader})
	require.NoError(t, err)
	p, err := ix.Get("traffic")
	require.NoError(t, err)
	det := &Model{Name: "detector", Inputs: []TensorSpec{{Name: "image", DataType: tensor.FP32}}, Outputs: []TensorSpec{{Name: "crops", DataType: tensor.FP32}}}
	cls := &Model{Name: "classifier", Inputs: []TensorSpec{{Name: "crop", DataType: tensor.FP32}}, Outputs: []TensorSpec{{Name: "scores", DataType: tensor.FP32}}}
	models := map[string]*Model{"detector": det, "classifier": cls}
	get := func(name string) *Model { return models[name] }
	steps, err := p.CheckEnsemble(get)
	require.NoError(t, err)
	require.Equal(t, []*Model{det, cls}, steps)

	delete(models, "classifier")
	_, err = p.CheckEnsemble(get)
	require.ErrorIs(t, err, ErrEnsemble)
	require.ErrorContains(t, err, "step[1] (classifier): the model is not served")

	models["classifier"] = &Model{Name: "classifier", Inputs: []TensorSpec{{Name: "crop", DataType: tensor.Int64}, {Name: "mask", DataType: tensor.FP32}},
		Outputs: []TensorSpec{{Name: "logits", DataType: tensor.FP32}}}
	_, err = p.CheckEnsemble(get)
	require.ErrorContains(t, err, `input "crop" is INT64 but "boxes" is FP32`)
	require.ErrorContains(t, err, `input "mask" of the model is not in input_map`)
	require.ErrorContains(t, err, `output_map names "scores"`)

	// A stateful model runs a step before the fan-out, in the request's
	// sequence, not one after it (once a row); its control and state are
	// no pipeline tensors.
	models["classifier"] = &Model{Name: "classifier", Inputs: cls.Inputs, Outputs: cls.Outputs, Config: ModelConfig{Sequence: &Sequence{}}}
	_, err = p.CheckEnsemble(get)
	require.ErrorContains(t, err, "step[1] (classifier): a stateful model (sequence_batching) runs here once for each row of the fan-out")
	models["classifier"] = cls
	seq := &Sequence{Controls: []SequenceControl{{Input: "START", Kind: ControlStart}}, States: []SequenceState{{Input: "acc", Output: "acc_next"}}}
	models["detector"] = &Model{Name: "detector", Config: ModelConfig{Sequence: seq},
		Inputs:  append(slices.Clone(det.Inputs), TensorSpec{Name: "START", Sequence: RoleControl}, TensorSpec{Name: "acc", Sequence: RoleState}),
		Outputs: append(slices.Clone(det.Outputs), TensorSpec{Name: "acc_next", Sequence: RoleState})}
	steps, err = p.CheckEnsemble(get)
	require.NoError(t, err)
	require.Equal(t, models["detector"], steps[0])
	p.Config.Ensemble.Steps[0].Inputs["START"] = "image"
	p.Config.Ensemble.Steps[0].Outputs["acc_next"] = "acc"
	_, err = p.CheckEnsemble(get)
	require.ErrorContains(t, err, `step[0] (detector): input_map names "START", the model's sequence control, which gpuletd fills`)
	require.ErrorContains(t, err, `step[0] (detector): output_map names "acc_next", the model's sequence state`)
}

// TestVariantParameters: a model says which model it may stand in for and
// its accuracy, in config.pbtxt's parameters or config.yaml.
func TestVariantParameters(t *testing.T) {
	v1 := map[string]string{"1/model.onnx": "onnx"}
	lite := strings.Replace(tritonLenet, `"bad"`, `"lite"`, 1) +
		`parameters { key: "variant_of" value { string_value: "full" } }` + "\n" +
		`parameters { key: "accuracy" value { string_value: "0.8" } }` + "\n"
	root := writeRepo(t, map[string]entry{
		"lite":  pbtxtEntry(lite, v1),
		"lite2": {files: map[string]string{"config.yaml": "slo: 10ms\nmax_batch_size: 8\nvariant_of: full\naccuracy: 0.7\n", "1/model.onnx": "onnx"}},
		"bad":   pbtxtEntry(tritonLenet+`parameters { key: "accuracy" value { string_value: "1.5" } }`+"\n", v1),
		"bad2":  {files: map[string]string{"config.yaml": "slo: 10ms\nvariant_of: ../x\n", "1/model.onnx": "onnx"}},
	})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: time.Second})
	require.NoError(t, err)
	m, err := ix.Get("lite")
	require.NoError(t, err)
	require.Equal(t, "full", m.Config.VariantOf)
	require.InDelta(t, 0.8, m.Config.ModelAccuracy(), 1e-12)
	m, err = ix.Get("lite2")
	require.NoError(t, err)
	require.Equal(t, "full", m.Config.VariantOf)
	require.InDelta(t, 0.7, m.Config.ModelAccuracy(), 1e-12)
	require.ErrorContains(t, ix.Broken["bad"], `parameters["accuracy"]: "1.5" is not an accuracy`)
	require.ErrorContains(t, ix.Broken["bad2"], `variant_of: "../x" is not a model name`)
	require.InDelta(t, 1, ModelConfig{}.ModelAccuracy(), 0, "not given: 1")
}

// TestFitsStep: a model fits a step in place of the step's model when it
// takes the same inputs, gives every output the step maps with the same
// data types, and batches as the step's model does.
func TestFitsStep(t *testing.T) {
	fp := func(names ...string) []TensorSpec {
		var out []TensorSpec
		for _, n := range names {
			out = append(out, TensorSpec{Name: n, DataType: tensor.FP32})
		}
		return out
	}
	step := EnsembleStep{Model: "cls", Inputs: map[string]string{"crop": "boxes"}, Outputs: map[string]string{"scores": "labels"}}
	cls := &Model{Name: "cls", Inputs: fp("crop"), Outputs: fp("scores", "features"), Config: ModelConfig{MaxBatchSize: 8}}
	for _, tc := range []struct {
		name string
		m    *Model
		fits bool
	}{
		{"same tensors", &Model{Inputs: fp("crop"), Outputs: fp("scores"), Config: ModelConfig{MaxBatchSize: 4}}, true},
		{"another input", &Model{Inputs: fp("image"), Outputs: fp("scores"), Config: ModelConfig{MaxBatchSize: 4}}, false},
		{"an extra input", &Model{Inputs: fp("crop", "mask"), Outputs: fp("scores"), Config: ModelConfig{MaxBatchSize: 4}}, false},
		{"no mapped output", &Model{Inputs: fp("crop"), Outputs: fp("features"), Config: ModelConfig{MaxBatchSize: 4}}, false},
		{"another type", &Model{Inputs: []TensorSpec{{Name: "crop", DataType: tensor.FP16}}, Outputs: fp("scores"), Config: ModelConfig{MaxBatchSize: 4}}, false},
		{"does not batch", &Model{Inputs: fp("crop"), Outputs: fp("scores")}, false},
		{"a pipeline", &Model{Inputs: fp("crop"), Outputs: fp("scores"), Config: ModelConfig{MaxBatchSize: 4, Ensemble: &Ensemble{}}}, false},
		{"stateful", &Model{Inputs: fp("crop"), Outputs: fp("scores"), Config: ModelConfig{MaxBatchSize: 4, Sequence: &Sequence{}}}, false},
	} {
		require.Equal(t, tc.fits, tc.m.FitsStep(step, cls), tc.name)
	}
	stateful := *cls
	stateful.Config.Sequence = &Sequence{}
	require.False(t, (&Model{Inputs: fp("crop"), Outputs: fp("scores"), Config: ModelConfig{MaxBatchSize: 4}}).FitsStep(step, &stateful), "a stateful step has no variant")
}
