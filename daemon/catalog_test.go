package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
	"github.com/gpulet/gpuletd/profiler/store"
)

// fixedReader stands in for ONNX Runtime: every file has one FP32 input
// and output with a batch dimension.
func fixedReader(string) ([]repository.TensorSpec, []repository.TensorSpec, error) {
	return []repository.TensorSpec{{Name: "x", DataType: tensor.FP32, Dims: []int64{-1, 4}}},
		[]repository.TensorSpec{{Name: "y", DataType: tensor.FP32, Dims: []int64{-1, 2}}}, nil
}

// TestCatalogServesVersionsSideBySide loads a model folder whose version
// policy selects several versions, re-loads it with a narrower policy and
// unloads it.
func TestCatalogServesVersionsSideBySide(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "m")
	for _, v := range []string{"1", "2", "3"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, v), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, v, "model.onnx"), []byte("file "+v), 0o644))
	}
	writeConfig := func(policy string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "config.pbtxt"),
			[]byte("name: \"m\"\nplatform: \"onnxruntime_onnx\"\nmax_batch_size: 4\n"+policy), 0o644))
	}
	writeConfig("version_policy: { latest: { num_versions: 2 } }\n")
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	c := newCatalog([]string{root}, testRepositoryOptions(time.Second), st, newEvents(st, zap.NewNop()), zap.NewNop())
	c.opts.Read = fixedReader
	n := &node{catalog: c}

	_, err = c.scan(context.Background(), []string{config.StartupAll})
	require.NoError(t, err)
	require.Equal(t, []int{2, 3}, c.versions("m"))
	for _, tc := range []struct {
		version string
		key     string
		code    int
	}{
		{"", "m", 0}, {"3", "m", 0}, {"2", "m:2", 0}, {"1", "", 404}, {"x", "", 404},
	} {
		m, ierr := n.lookupModel("m", tc.version)
		if tc.code != 0 {
			require.NotNil(t, ierr, tc.version)
			require.Equal(t, tc.code, ierr.code)
			require.Contains(t, ierr.msg, "versions [2 3] are served")
			continue
		}
		require.Nil(t, ierr, tc.version)
		require.Equal(t, tc.key, m.Name)
		require.Equal(t, "m", m.Family)
		require.Equal(t, filepath.Join(dir, map[string]string{"m": "3", "m:2": "2"}[tc.key], "model.onnx"), m.File)
	}

	// A narrower policy drops the version it no longer selects.
	writeConfig("")
	m, _, err := c.load(context.Background(), "m", nil, "", nil)
	require.NoError(t, err)
	require.Equal(t, 3, m.Version)
	require.Equal(t, []int{3}, c.versions("m"))
	_, ok := c.get("m:2")
	require.False(t, ok)

	// Versions a load's check fails replace none of those served, and
	// the folder's entry keeps the reason.
	writeConfig("version_policy: { all: { } }\n")
	refuse := func(ms []*repository.Model) error {
		require.Len(t, ms, 3, "every version read")
		return fmt.Errorf("%w: m as it reads now cannot be served on this node", repository.ErrInvalidModel)
	}
	_, _, err = c.load(context.Background(), "m", nil, "", refuse)
	require.ErrorIs(t, err, repository.ErrInvalidModel)
	require.Equal(t, []int{3}, c.versions("m"))
	c.mu.RLock()
	require.ErrorContains(t, c.index.Broken["m"], "cannot be served on this node")
	c.mu.RUnlock()

	// Unloading the folder's name stops every version.
	writeConfig("version_policy: { all: { } }\n")
	_, _, err = c.load(context.Background(), "m", nil, "", nil)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3}, c.versions("m"))
	uploaded, err := c.unload("m")
	require.NoError(t, err)
	require.Empty(t, uploaded, "from the repository: nothing to remove")
	require.Empty(t, c.versions("m"))
	require.Empty(t, c.all())

	// The folder is still there: its endpoints, the index and the status
	// say it was unloaded, until it is loaded again.
	require.Equal(t, []string{"m"}, c.unloadedNames())
	_, ierr := n.lookupModel("m", "")
	require.NotNil(t, ierr)
	require.Equal(t, 404, ierr.code)
	require.Regexp(t, `^model "m" is not served: unloaded at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d through the repository API; load it with the repository API \(gpuletd models load m\)$`, ierr.msg)
	entries, err := c.indexEntries(context.Background())
	require.NoError(t, err)
	require.Len(t, entries, 3)
	for _, e := range entries {
		require.Equal(t, "UNAVAILABLE", e.State)
		require.Contains(t, e.Reason, "unloaded at ")
	}
	_, _, err = c.load(context.Background(), "m", nil, "", nil)
	require.NoError(t, err)
	require.Empty(t, c.unloadedNames())
	_, err = c.unload("m")
	require.NoError(t, err)
	c.forgetUnloaded("m") // its folder left the repository
	require.Empty(t, c.unloadedNames())
	c.mu.Lock()
	c.markUnloaded("copy", "copy", time.Now()) // loaded from uploaded files alone: no folder to load again
	c.mu.Unlock()
	require.Empty(t, c.unloadedNames())
	_, ierr = n.lookupModel("m", "")
	require.Contains(t, ierr.msg, `unknown model "m"`)
}

// A name the repository does not hold is answered with the one it likely
// meant, among the served models, pipelines, folders left out at start and
// broken ones; never a guess between two.
func TestUnknownModelSaysWhichWasMeant(t *testing.T) {
	model := func(name string) *repository.Model { return &repository.Model{Name: name, Family: name} }
	n := &node{catalog: &catalog{
		models:    map[string]*repository.Model{"lenet5": model("lenet5"), "resnet18": model("resnet18"), "resnet50": model("resnet50"), "resnet50:2": {Name: "resnet50:2", Family: "resnet50"}},
		pipelines: map[string]*repository.Model{"spot-and-label": model("spot-and-label")},
		notLoaded: map[string]bool{"inception_v3": true},
		index:     &repository.Index{Broken: map[string]error{"bert-large": os.ErrNotExist}},
	}}
	for _, tc := range []struct{ name, want string }{
		{"lenet", ` (did you mean lenet5?)`},
		{"LeNet5", ` (did you mean lenet5?)`},
		{"resnet", ""}, // resnet18 or resnet50
		{"resnet51", ""},
		{"spot-and-lable", ` (did you mean spot-and-label?)`},
		{"inception-v3", ` (did you mean inception_v3?)`},
		{"bert_large", ` (did you mean bert-large?)`},
		{"vgg19", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ierr := n.lookupModel(tc.name, "")
			require.NotNil(t, ierr)
			require.Equal(t, 404, ierr.code)
			require.Equal(t, `unknown model "`+tc.name+`": it is not in the repository or not loaded`+tc.want, ierr.msg)
		})
	}
}

// TestPipelineStepsSayWhyAStepIsMissing: a pipeline whose step's folder is
// broken says why that step cannot be served; one whose step was unloaded
// says to load it; one that pins a version its step's folder does not
// serve says which it serves (it said to load it).
func TestPipelineStepsSayWhyAStepIsMissing(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, rel), []byte(text), 0o644))
	}
	write("good/config.yaml", "slo: 10ms\nmax_batch_size: 4\n")
	write("good/1/model.onnx", "good")
	write("pre/config.pbtxt", "name: \"pre\"\nbackend: \"python\"\nmax_batch_size: 4\n")
	write("pre/1/model.py", "")
	write("other/config.yaml", "slo: 10ms\nmax_batch_size: 4\n")
	write("other/2/model.onnx", "other")
	for _, p := range []struct{ name, first, version string }{{"withpre", "pre", "-1"}, {"withgood", "good", "-1"}, {"pinned", "other", "1"}} {
		write(p.name+"/config.pbtxt", `name: "`+p.name+`"
platform: "ensemble"
max_batch_size: 4
input [ { name: "x" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 2 ] } ]
parameters { key: "slo" value { string_value: "50ms" } }
ensemble_scheduling { step [ { model_name: "`+p.first+`" model_version: `+p.version+` input_map { key: "x" value: "x" } output_map { key: "y" value: "y" } } ] }
`)
		write(p.name+"/1/.keep", "")
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	c := newCatalog([]string{root}, testRepositoryOptions(time.Second), st, newEvents(st, zap.NewNop()), zap.NewNop())
	c.opts.Read = fixedReader

	_, err = c.scan(context.Background(), []string{"withpre", "withgood", "pinned"})
	require.NoError(t, err)
	_, err = c.unload("good")
	require.NoError(t, err)
	for _, tc := range []struct{ pipeline, want string }{
		{"withpre", `step[0] (pre) cannot be served: `},
		{"withgood", `step[0] (good): the model is not served; load it first`},
		// A version its folder does not serve: loading it would not help.
		{"pinned", `step[0] (other:1): version 1 of other is not one its version_policy serves (it serves 2)`},
	} {
		p, ok := c.pipeline(tc.pipeline)
		require.True(t, ok, tc.pipeline)
		_, err := c.steps(p)
		require.ErrorIs(t, err, repository.ErrEnsemble)
		require.ErrorContains(t, err, tc.want)
		if tc.pipeline == "withpre" {
			require.ErrorContains(t, err, `backend: "python" is not served`)
		}
	}
}

// testRepositoryOptions are serve's options for reading model folders with
// default_slo defaultSLO.
func testRepositoryOptions(defaultSLO time.Duration) repository.Options {
	cfg := config.Default()
	cfg.DefaultSLO = config.Duration(defaultSLO)
	return RepositoryOptions(&cfg)
}
