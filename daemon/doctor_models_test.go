package daemon

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// TestRepositoryReport: a repository judged as serve would: broken folders,
// a pipeline whose step is broken or missing, and what startup_models does.
func TestRepositoryReport(t *testing.T) {
	pipe := func(name string, steps ...string) *repository.Model {
		m := &repository.Model{Name: name, Family: name}
		m.Config.Ensemble = &repository.Ensemble{}
		for _, s := range steps {
			m.Config.Ensemble.Steps = append(m.Config.Ensemble.Steps, repository.EnsembleStep{Model: s})
		}
		return m
	}
	ix := &repository.Index{Roots: repository.Roots{"/models", "/more"},
		Models: map[string]*repository.Model{
			"good": {Name: "good", Family: "good"}, "good:1": {Name: "good:1", Family: "good"},
			"fine": pipe("fine", "good"), "halfbroken": pipe("halfbroken", "good", "bad"), "dangling": pipe("dangling", "gone"),
		},
		Broken: map[string]error{"bad": errors.New("invalid model: bad/1/model.onnx: truncated")},
	}
	r := RepositoryReport(ix, []string{config.StartupAll}, 64<<20)
	require.Equal(t, 5, r.Folders, "a folder's versions count once")
	require.Equal(t, map[string]string{
		"bad":        "invalid model: bad/1/model.onnx: truncated",
		"halfbroken": "its step bad is broken, so the pipeline cannot run",
		"dangling":   "its step gone is not in the repository, so the pipeline cannot run",
	}, r.Broken)
	require.Equal(t, "2 of 5 folder(s) in /models and /more can be served; bad, dangling, halfbroken cannot", r.Summary())
	require.Empty(t, r.NotLoaded)
	require.Empty(t, r.Warnings)

	// A model whose smallest request is above limits.max_request_body is
	// served, with a warning.
	ix.Models["good"].Inputs = []repository.TensorSpec{{Name: "x", DataType: tensor.FP32, Dims: []int64{-1, 1024}}}
	r = RepositoryReport(ix, []string{config.StartupAll}, 2048)
	require.Equal(t, []string{"good"}, r.WarningNames())
	require.Contains(t, r.Warnings["good"], `input "x" alone takes 4096 bytes`)
	require.NotContains(t, r.Broken, "good")
	ix.Models["good"].Inputs = nil

	r = RepositoryReport(ix, []string{"fine", "typo"}, 64<<20)
	require.Equal(t, []string{"bad", "dangling", "halfbroken"}, r.NotLoaded)
	require.Equal(t, []string{"typo"}, r.StartupUnknown)

	// A pipeline that pins a version its step's folder does not serve says
	// so, not that the folder is missing.
	pinned := pipe("pinned", "good")
	pinned.Config.Ensemble.Steps[0].Version = 7
	ix.Models["pinned"] = pinned
	ix.Models["good"].Version, ix.Models["good:1"].Version = 2, 1
	r = RepositoryReport(ix, []string{config.StartupAll}, 64<<20)
	require.Equal(t, "its step good:7 is not served, so the pipeline cannot run: version 7 of good is not one its version_policy serves (it serves 1, 2); "+
		"give the step model_version -1 for the newest, or serve that version too", r.Broken["pinned"])
	delete(ix.Models, "pinned")

	// A pipeline whose input does not fit its step's: broken, saying so,
	// as serve finds it. It was reported as one that serves.
	misfit := pipe("misfit", "good")
	misfit.Config.MaxBatchSize = 1
	misfit.Inputs = []repository.TensorSpec{{Name: "image", DataType: tensor.FP32, Dims: []int64{32}}}
	misfit.Config.Ensemble.Steps[0].Inputs = map[string]string{"x": "image"}
	ix.Models["misfit"] = misfit
	ix.Models["good"].Config.MaxBatchSize = 8
	ix.Models["good"].Inputs = []repository.TensorSpec{{Name: "x", DataType: tensor.FP32, Dims: []int64{64}}}
	r = RepositoryReport(ix, []string{config.StartupAll}, 64<<20)
	require.Contains(t, r.Broken["misfit"], `step[0] (good): input "x" is [N 64] but "image" is [N 32] (the pipeline's input)`)
	delete(ix.Models, "misfit")
	ix.Models["good"].Inputs = nil

	// A path_accuracy entry that names a model no step runs: a warning
	// naming the step and the models that may run it.
	lite := &repository.Model{Name: "good-lite", Family: "good-lite", Config: repository.ModelConfig{VariantOf: "good", MaxBatchSize: 8}}
	ix.Models["good-lite"] = lite
	scored := pipe("scored", "good")
	scored.Config.PathAccuracy = map[string]float64{"good": 1, "good-lite": 0.8, "good-lyte": 0.7}
	ix.Models["scored"] = scored
	r = RepositoryReport(ix, []string{config.StartupAll}, 64<<20)
	require.NotContains(t, r.Broken, "scored")
	require.Equal(t, `parameters["path_accuracy"]: path "good-lyte" is never run: step[0] (good) runs good or good-lite, not "good-lyte"`, r.Warnings["scored"])
	delete(ix.Models, "scored")
	delete(ix.Models, "good-lite")

	delete(ix.Broken, "bad")
	delete(ix.Models, "halfbroken")
	delete(ix.Models, "dangling")
	require.Equal(t, "2 folder(s) in /models and /more, all can be served", RepositoryReport(ix, nil, 64<<20).Summary())
}
