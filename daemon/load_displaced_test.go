package daemon

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/profiler/store"
)

// A load whose re-plan leaves models that served without a gpu-let names
// them, with why, in its answer and in a warning event; a model on its way
// to a gpu-let is not named, nor are the loaded folder's own versions.
func TestALoadNamesTheModelsItsPlanNoLongerServes(t *testing.T) {
	n, lat := twoModelNode(t, nil)
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	n.events = newEvents(st, zap.NewNop())
	n.catalog.models["c"] = &repository.Model{Name: "c", Family: "c"}
	n.catalog.models["a@1"] = &repository.Model{Name: "a@1", Family: "a", Version: 1}
	g := &gpuletRun{id: "g"}
	all := map[string][]routeEntry{}
	for _, m := range []string{"a", "a@1", "b", "c"} {
		all[m] = []routeEntry{{g: g, weight: 1, lat: lat}}
	}
	n.router.install(all)
	before := n.servedBesides("a")
	require.Equal(t, []string{"b", "c"}, before, "the others that serve")

	// The plan made with a: b has no gpu-let, c is on its way to one.
	n.router.install(map[string][]routeEntry{"a": all["a"]})
	n.unserved.set("b", "no gpu-let can take it")
	got := n.displacedBy("a", before)
	require.Len(t, got, 1)
	require.Contains(t, got["b"], "no gpu-let can take it")
	evs, err := st.Events(context.Background(), 0, 0)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	require.Equal(t, store.SeverityWarning, last.Severity)
	require.Equal(t, "loading a took the gpu-lets of b: the plan made with it no longer serves them (gpuletd models show NAME says why)", last.Message)

	require.Nil(t, n.displacedBy("a", nil), "nothing served before")
}
