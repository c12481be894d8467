package repository

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// prepEnsemble is a pipeline of two models written out of order (embed
// reads what norm writes), to be a step of sceneEnsemble.
const prepEnsemble = `name: "prep"
platform: "ensemble"
max_batch_size: 8
input [ { name: "pix", data_type: TYPE_FP32, dims: [ 4 ] } ]
output [ { name: "vec", data_type: TYPE_FP32, dims: [ 2 ] } ]
ensemble_scheduling {
  step [
    { model_name: "embed", model_version: -1, input_map { key: "x" value: "mid" }, output_map { key: "y" value: "vec" } },
    { model_name: "norm", model_version: -1, input_map { key: "x" value: "pix" }, output_map { key: "y" value: "mid" } }
  ]
}
`

// sceneEnsemble runs prep, then head on what prep writes, and beside them
// side on the image.
const sceneEnsemble = `name: "scene"
platform: "ensemble"
max_batch_size: 8
input [ { name: "image", data_type: TYPE_FP32, dims: [ 4 ] } ]
output [ { name: "labels", data_type: TYPE_FP32, dims: [ 2 ] }, { name: "side", data_type: TYPE_FP32, dims: [ 2 ] } ]
ensemble_scheduling {
  step [
    { model_name: "prep", model_version: -1, input_map { key: "pix" value: "image" }, output_map { key: "vec" value: "features" } },
    { model_name: "head", model_version: -1, input_map { key: "x" value: "features" }, output_map { key: "y" value: "labels" } },
    { model_name: "side", model_version: -1, input_map { key: "x" value: "image" }, output_map { key: "y" value: "side" } }
  ]
}
`

func TestANestedPipelinesStepsRunInItsPlace(t *testing.T) {
	root := writeRepo(t, map[string]entry{"prep": pbtxtEntry(prepEnsemble, nil), "scene": pbtxtEntry(sceneEnsemble, nil)})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: 100 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, ix.Broken)
	m, err := ix.Get("scene")
	require.NoError(t, err)
	e := m.Config.Ensemble
	require.Equal(t, []EnsembleStep{
		{Model: "norm", Inputs: map[string]string{"x": "image"}, Outputs: map[string]string{"y": "step[0].mid"}, Within: []int{1}},
		{Model: "embed", Inputs: map[string]string{"x": "step[0].mid"}, Outputs: map[string]string{"y": "features"}, Within: []int{0}, Needs: []int{0}},
		{Model: "head", Inputs: map[string]string{"x": "features"}, Outputs: map[string]string{"y": "labels"}, At: 1, Needs: []int{1}},
		{Model: "side", Inputs: map[string]string{"x": "image"}, Outputs: map[string]string{"y": "side"}, At: 2, Beside: true},
	}, e.Steps)
	require.Equal(t, "step[0].step[1]", e.Steps[0].Place())
	require.Equal(t, "step[2]", e.Steps[3].Place())
	require.Equal(t, [][]int{{1}, {2}, nil, nil}, e.Waits, "side runs beside the rest")
	require.Equal(t, []string{"prep"}, e.Inlined)
	require.Equal(t, map[int]EnsembleStep{0: {Model: "prep", Inputs: map[string]string{"pix": "image"}, Outputs: map[string]string{"vec": "features"}}}, e.Nested)
	require.Contains(t, strings.Join(m.Notes, "\n"), "ensemble_scheduling.step[0] runs the pipeline prep: its 2 steps run in its place")

	// A table of accuracies by path names the steps as written: ignored,
	// saying so.
	withPaths := strings.Replace(sceneEnsemble, "ensemble_scheduling", `parameters { key: "path_accuracy" value { string_value: "prep/head/side=0.9" } }
ensemble_scheduling`, 1)
	paths := writeRepo(t, map[string]entry{"prep": pbtxtEntry(prepEnsemble, nil), "scene": pbtxtEntry(withPaths, nil)})
	pm, err := Load(Roots{paths}, "scene", Options{Read: fakeReader, DefaultSLO: 100 * time.Millisecond})
	require.NoError(t, err)
	require.Nil(t, pm.Config.PathAccuracy)
	require.Contains(t, strings.Join(pm.Notes, "\n"), `parameters["path_accuracy"] ignored: a step runs a pipeline`)

	// Read back, the configuration is as written.
	var models []string
	for _, s := range e.TritonScheduling().Step {
		models = append(models, s.ModelName)
	}
	require.Equal(t, []string{"prep", "head", "side"}, models)

	// The inner pipeline serves on its own too, as written.
	prep, err := ix.Get("prep")
	require.NoError(t, err)
	require.Nil(t, prep.Config.Ensemble.Nested)
	require.Len(t, prep.Config.Ensemble.Steps, 2)

	// Pipelines three deep: a pipeline of scene.
	outer := strings.NewReplacer(`name: "scene"`, `name: "top"`, `model_name: "prep"`, `model_name: "scene"`, `key: "pix"`, `key: "image"`,
		`key: "vec" value: "features"`, `key: "labels" value: "features"`).Replace(sceneEnsemble)
	root = writeRepo(t, map[string]entry{"prep": pbtxtEntry(prepEnsemble, nil), "scene": pbtxtEntry(sceneEnsemble, nil), "top": pbtxtEntry(outer, nil)})
	ix, err = Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: 100 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, ix.Broken)
	top, err := ix.Get("top")
	require.NoError(t, err)
	var places []string
	for _, s := range top.Config.Ensemble.Steps {
		places = append(places, s.Place()+" "+s.Model)
	}
	require.Equal(t, []string{"step[0].step[0].step[1] norm", "step[0].step[0].step[0] embed", "step[0].step[1] head", "step[0].step[2] side", "step[1] head", "step[2] side"}, places)
	require.Equal(t, []string{"prep", "scene"}, top.Config.Ensemble.Inlined)
	require.Equal(t, "step[0].step[0].mid", top.Config.Ensemble.Steps[0].Outputs["y"])
	require.Equal(t, "step[0].side", top.Config.Ensemble.Steps[3].Outputs["y"], "an output of scene top does not map is its own")
}

func TestNestedPipelinesThatCannotRun(t *testing.T) {
	step := func(model, in, out string) string {
		return fmt.Sprintf(`{ model_name: %q, model_version: -1, input_map { %s }, output_map { %s } }`, model, in, out)
	}
	pipeline := func(name string, extra string, steps ...string) string {
		return fmt.Sprintf(`name: %q
platform: "ensemble"
input [ { name: "pix", data_type: TYPE_FP32, dims: [ 4 ] } ]
output [ { name: "vec", data_type: TYPE_FP32, dims: [ 2 ] } ]
%s
ensemble_scheduling { step [ %s ] }
`, name, extra, strings.Join(steps, ", "))
	}
	plain := func(model string) string { return step(model, `key: "pix" value: "pix"`, `key: "vec" value: "vec"`) }
	// fanned is a pipeline whose detector's rows each go to a classifier.
	fanned := pipeline("inner", `parameters { key: "fanout" value { string_value: "mid" } }`,
		step("det", `key: "x" value: "pix"`, `key: "y" value: "mid"`), step("cls", `key: "x" value: "mid"`, `key: "y" value: "vec"`))
	deep := func(n int) map[string]string { // p0 runs p1 … runs p<n-1>, which runs a model
		folders := map[string]string{}
		for i := range n {
			next := fmt.Sprintf("p%d", i+1)
			if i == n-1 {
				next = "m"
			}
			folders[fmt.Sprintf("p%d", i)] = pipeline(fmt.Sprintf("p%d", i), "", plain(next))
		}
		return folders
	}
	for _, tc := range []struct {
		name    string
		folders map[string]string
		broken  string // the folder refused
		want    string
	}{
		{"a pipeline running itself", map[string]string{"a": pipeline("a", "", plain("a"))}, "a",
			"ensemble_scheduling.step[0] (a): pipelines run each other's steps without end: a runs a"},
		{"two pipelines running each other", map[string]string{"a": pipeline("a", "", plain("b")), "b": pipeline("b", "", plain("a"))}, "a",
			"config.pbtxt: ensemble_scheduling.step[0] (b): pipelines run each other's steps without end: a runs b runs a"},
		{"three pipelines in a cycle", map[string]string{"a": pipeline("a", "", plain("b")), "b": pipeline("b", "", plain("c")), "c": pipeline("c", "", plain("b"))}, "a",
			"config.pbtxt: ensemble_scheduling.step[0] (b): pipelines run each other's steps without end: b runs c runs b"},
		{"pipelines nested too deep", deep(10), "p0",
			"config.pbtxt: ensemble_scheduling.step[0] (p1): pipelines nested 9 deep (p0 runs p1 runs p2 runs p3 runs p4 runs p5 runs p6 runs p7 runs p8 runs p9); at most 8"},
		{"a pipeline with a fan-out in one with its own", map[string]string{"inner": fanned,
			"outer": pipeline("outer", `parameters { key: "fanout" value { string_value: "vec" } }`, plain("inner"), step("post", `key: "x" value: "vec"`, `key: "y" value: "out"`))}, "outer",
			`ensemble_scheduling.step[0]: inner is a pipeline with a fan-out ("mid"), and this pipeline has one ("vec"); a pipeline has at most one`},
		{"a pipeline with a fan-out in one that batches", map[string]string{"inner": fanned,
			"outer": strings.Replace(pipeline("outer", "", plain("inner")), "platform", "max_batch_size: 4\nplatform", 1)}, "outer",
			`max_batch_size: 4; ensemble_scheduling.step[0] runs the pipeline inner, whose fan-out answers one request at a time: 0 or 1`},
		{"a step reading what a nested fan-out's rows write", map[string]string{"inner": fanned,
			"outer": pipeline("outer", "", plain("inner"), step("post", `key: "x" value: "vec"`, `key: "y" value: "out"`))}, "outer",
			`ensemble_scheduling.step[1] (post) reads what the rows of the fan-out of the pipeline step[0] runs (inner) write; only the answer may read them`},
		{"an input of the inner pipeline not mapped", map[string]string{"inner": pipeline("inner", "", plain("m")),
			"outer": pipeline("outer", "", step("inner", `key: "image" value: "pix"`, `key: "vec" value: "vec"`))}, "outer",
			`input "pix" of the pipeline inner is not mapped`},
		{"an output the inner pipeline has not", map[string]string{"inner": pipeline("inner", "", plain("m")),
			"outer": pipeline("outer", "", step("inner", `key: "pix" value: "pix"`, `key: "labels" value: "vec"`))}, "outer",
			`ensemble_scheduling.step[0].output_map names "labels", which the pipeline inner has not (outputs: [vec])`},
		{"a version of a pipeline", map[string]string{"inner": pipeline("inner", "", plain("m")),
			"outer": pipeline("outer", "", strings.Replace(plain("inner"), "-1", "2", 1))}, "outer",
			"ensemble_scheduling.step[0].model_version: 2; inner is a pipeline, served as version 1 alone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries := map[string]entry{}
			for name, pbtxt := range tc.folders {
				entries[name] = pbtxtEntry(pbtxt, nil)
			}
			ix, err := Scan(Roots{writeRepo(t, entries)}, Options{Read: fakeReader, DefaultSLO: 100 * time.Millisecond})
			require.NoError(t, err)
			require.ErrorIs(t, ix.Broken[tc.broken], ErrInvalidModel)
			require.ErrorContains(t, ix.Broken[tc.broken], tc.want)
			require.ErrorContains(t, ix.Broken[tc.broken], "config.pbtxt")
		})
	}

	// A pipeline with a fan-out as a step, beside another: its fan-out is
	// this one's.
	root := writeRepo(t, map[string]entry{"inner": pbtxtEntry(fanned, nil),
		"outer": pbtxtEntry(pipeline("outer", "", plain("inner"), step("side", `key: "x" value: "pix"`, `key: "y" value: "other"`)), nil)})
	ix, err := Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: 100 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, ix.Broken)
	outer, err := ix.Get("outer")
	require.NoError(t, err)
	e := outer.Config.Ensemble
	var places []string
	for _, s := range e.Steps {
		places = append(places, s.Place()+" "+s.Model)
	}
	require.Equal(t, []string{"step[1] side", "step[0].step[0] det", "step[0].step[1] cls"}, places)
	require.Equal(t, "step[0].mid", e.Fanout)
	require.Equal(t, 2, e.FanoutStep)
	require.Equal(t, 1, e.FanoutWriter)

	// Eight deep is served.
	entries := map[string]entry{}
	for name, pbtxt := range deep(9) {
		entries[name] = pbtxtEntry(pbtxt, nil)
	}
	ix, err = Scan(Roots{writeRepo(t, entries)}, Options{Read: fakeReader, DefaultSLO: 100 * time.Millisecond})
	require.NoError(t, err)
	require.Empty(t, ix.Broken)
	p0, err := ix.Get("p0")
	require.NoError(t, err)
	require.Equal(t, "step[0].step[0].step[0].step[0].step[0].step[0].step[0].step[0].step[0]", p0.Config.Ensemble.Steps[0].Place())

	// A step whose folder is a broken pipeline is a step of its own: the
	// daemon says it cannot be served, naming what is wrong with it.
	root = writeRepo(t, map[string]entry{"inner": pbtxtEntry(`platform: "ensemble"`, nil), "outer": pbtxtEntry(pipeline("outer", "", plain("inner")), nil)})
	ix, err = Scan(Roots{root}, Options{Read: fakeReader, DefaultSLO: 100 * time.Millisecond})
	require.NoError(t, err)
	require.Contains(t, ix.Broken, "inner")
	outer, err = ix.Get("outer")
	require.NoError(t, err)
	require.Equal(t, "inner", outer.Config.Ensemble.Steps[0].Model)
	require.Nil(t, outer.Config.Ensemble.Nested)
}
