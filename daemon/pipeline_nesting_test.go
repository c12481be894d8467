package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/profiler/store"
)

// TestANestedPipelineRunsItsInnerSteps: a pipeline whose step is a
// pipeline runs that pipeline's models in its place, says which of them is
// missing by its place in both, and is the one loaded again when the inner
// pipeline is; one whose step's folder is not yet a pipeline is too.
func TestANestedPipelineRunsItsInnerSteps(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, rel), []byte(text), 0o644))
	}
	for _, m := range []string{"a", "b"} {
		write(m+"/config.yaml", "slo: 10ms\nmax_batch_size: 4\n")
		write(m+"/1/model.onnx", m)
	}
	pipeline := func(name, steps string) {
		write(name+"/config.pbtxt", `name: "`+name+`"
platform: "ensemble"
max_batch_size: 4
input [ { name: "x" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 2 ] } ]
parameters { key: "slo" value { string_value: "50ms" } }
ensemble_scheduling { step [ `+steps+` ] }
`)
	}
	// The fixed reader gives every model input x [4] and output y [2]: a
	// then b would not fit, so both read the pipeline's x.
	pipeline("inner", `{ model_name: "a" model_version: -1 input_map { key: "x" value: "x" } output_map { key: "y" value: "side" } },
		{ model_name: "b" model_version: -1 input_map { key: "x" value: "x" } output_map { key: "y" value: "y" } }`)
	pipeline("outer", `{ model_name: "inner" model_version: -1 input_map { key: "x" value: "x" } output_map { key: "y" value: "y" } }`)
	pipeline("plain", `{ model_name: "a" model_version: -1 input_map { key: "x" value: "x" } output_map { key: "y" value: "y" } }`)
	pipeline("later", `{ model_name: "notyet" model_version: -1 input_map { key: "x" value: "x" } output_map { key: "y" value: "y" } }`)
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	c := newCatalog([]string{root}, testRepositoryOptions(time.Second), st, newEvents(st, zap.NewNop()), zap.NewNop())
	c.opts.Read = fixedReader
	_, err = c.scan(context.Background(), []string{config.StartupAll})
	require.NoError(t, err)

	outer, ok := c.pipeline("outer")
	require.True(t, ok)
	steps, err := c.steps(outer)
	require.NoError(t, err)
	var names []string
	for _, m := range steps {
		names = append(names, m.Name)
	}
	require.Equal(t, []string{"a", "b"}, names, "the inner pipeline's models run in its place")

	require.Equal(t, []string{"outer"}, pipelineNames(c.pipelinesNesting("inner")))
	require.Equal(t, []string{"later"}, pipelineNames(c.pipelinesNesting("notyet")), "a folder that is not a pipeline yet")
	require.Empty(t, c.pipelinesNesting("outer"))

	_, err = c.unload("b")
	require.NoError(t, err)
	_, err = c.steps(outer)
	require.ErrorIs(t, err, repository.ErrEnsemble)
	require.ErrorContains(t, err, "step[0].step[1] (b): the model is not served; load it first")
}

func pipelineNames(ps []*repository.Model) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
