package daemon

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/gpulet"
)

func TestModelStateMetricSaysWhatIsNotServed(t *testing.T) {
	lat, err := sched.LinearLatency(time.Millisecond, 5*time.Millisecond, 8)
	require.NoError(t, err)
	model := func(name string) *repository.Model { return &repository.Model{Name: name, Family: name} }
	c := &catalog{
		models: map[string]*repository.Model{"served": model("served"), "failed": model("failed"), "placing": model("placing"), "restarting": model("restarting"),
			"measuring": model("measuring")},
		pipelines: map[string]*repository.Model{},
		index:     &repository.Index{Broken: map[string]error{"corrupt": errors.New("invalid model: model.onnx: truncated")}},
	}
	n := &node{catalog: c, router: newRouter()}
	cfg := config.Default()
	n.cfg.Store(&cfg)
	up, down := &gpuletRun{id: "a"}, &gpuletRun{id: "b"}
	down.down.Store(true)
	n.router.install(map[string][]routeEntry{
		"served":     {{g: up, weight: 1, lat: lat}},
		"restarting": {{g: down, weight: 1, lat: lat}},
	})
	n.unserved.set("failed", "profiling on cpu failed: the model does not load")
	n.liveNotes.set("measuring", "being profiled on cpu since 10:00:00 (a quick profile beside the serving gpu-lets); it is placed once measured")

	want := map[string]string{
		"served":     stateReady,
		"failed":     stateUnservable,
		"placing":    stateWaiting,
		"restarting": stateWaiting, // its only executor is down: on its way back
		"measuring":  stateWaiting, // loaded while serving, measured beside the others: on its way too
		"corrupt":    stateUnservable,
	}
	require.Equal(t, want, n.repositoryStates())
	require.Equal(t, "waiting for a gpu-let: being profiled on cpu since 10:00:00 (a quick profile beside the serving gpu-lets); it is placed once measured",
		n.notReadyReason("measuring"))
	require.Equal(t, "profiling on cpu failed: the model does not load", n.notReadyReason("failed"))

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(stateOnly{n}))
	fams, err := reg.Gather()
	require.NoError(t, err)
	require.Len(t, fams, 1)
	got := map[string]map[string]float64{}
	for _, m := range fams[0].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if got[labels["model"]] == nil {
			got[labels["model"]] = map[string]float64{}
		}
		got[labels["model"]][labels["state"]] = m.GetGauge().GetValue()
	}
	for name, state := range want {
		require.Len(t, got[name], len(modelStates), name)
		for _, s := range modelStates {
			v := 0.0
			if s == state {
				v = 1
			}
			require.Equal(t, v, got[name][s], "%s %s", name, s)
		}
	}
}

// stateOnly is the node collector's gpuletd_model_state alone.
type stateOnly struct{ n *node }

func (s stateOnly) Describe(ch chan<- *prometheus.Desc) { ch <- descState }
func (s stateOnly) Collect(ch chan<- prometheus.Metric) { collectModelStates(s.n, ch) }

// The server is ready once every model is, even while the first plan is
// still finishing: a client that saw each model ready never reads the
// server as not ready after that.
func TestServerReadyOnceEveryModelIsRouted(t *testing.T) {
	n, lat := twoModelNode(t, nil)
	g := &gpuletRun{id: "g"}

	ready, waiting, _ := n.readiness()
	require.False(t, ready, "nothing routed, no first plan")
	require.Equal(t, []string{"a", "b"}, waiting)

	n.router.install(map[string][]routeEntry{"a": {{g: g, weight: 1, lat: lat}}})
	ready, waiting, _ = n.readiness()
	require.False(t, ready, "the first plan's routes half published")
	require.Equal(t, []string{"b"}, waiting)

	n.router.install(map[string][]routeEntry{"a": {{g: g, weight: 1, lat: lat}}, "b": {{g: g, weight: 1, lat: lat}}})
	ready, _, _ = n.readiness()
	require.True(t, ready, "every model ready: so is the server, before the first plan returns")

	n.stopping.Store(true)
	ready, _, _ = n.readiness()
	require.False(t, ready)
}

// A model that cannot be served leaves the server ready, saying why
// elsewhere; with strict_readiness (Triton's --strict-readiness) the server
// is not ready while it cannot, and is again once it serves or leaves the
// repository.
func TestStrictReadiness(t *testing.T) {
	n, lat := twoModelNode(t, map[string]error{"corrupt": errors.New("invalid model: model.onnx: truncated")})
	cfg := *n.conf()
	g := &gpuletRun{id: "g"}
	n.router.install(map[string][]routeEntry{"a": {{g: g, weight: 1, lat: lat}}})
	n.ready.Store(true)
	n.unserved.set("b", "profiling on cpu failed: the model does not load")

	ready, waiting, unservable := n.readiness()
	require.True(t, ready, "b says why it cannot be served")
	require.Empty(t, waiting)
	require.Nil(t, unservable, "without strict_readiness nothing waits on them")

	strict := cfg
	strict.StrictReadiness = true
	n.cfg.Store(&strict)
	ready, _, unservable = n.readiness()
	require.False(t, ready, "strict: every model must serve")
	require.Equal(t, []string{"b", "corrupt"}, unservable, "a broken repository entry too")
	rec := httptest.NewRecorder()
	n.handleReady(rec, httptest.NewRequest(http.MethodGet, "/v2/health/ready", nil))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.JSONEq(t, `{"ready": false, "unservable": ["b", "corrupt"]}`, rec.Body.String())

	n.unserved.clear("b")
	n.router.install(map[string][]routeEntry{"a": {{g: g, weight: 1, lat: lat}}, "b": {{g: g, weight: 1, lat: lat}}})
	ready, _, unservable = n.readiness()
	require.False(t, ready, "corrupt is still in the repository")
	require.Equal(t, []string{"corrupt"}, unservable)
	n.catalog.index = &repository.Index{} // removed from it
	ready, _, unservable = n.readiness()
	require.True(t, ready, "b serves now")
	require.Empty(t, unservable)
}

// A model whose only executor died and is being started again does not
// take the node out of a load balancer's rotation while other models serve
// (the restart takes seconds on a GPU; before, the node read not ready for
// it, so that every other model's traffic left it too); it says why it
// waits. When no model serves, or with strict_readiness, it counts.
func TestReadinessWhileAnExecutorRestarts(t *testing.T) {
	n, lat := twoModelNode(t, nil)
	cfg := *n.conf()
	up, down := &gpuletRun{id: "gpu0-50-1"}, &gpuletRun{id: "gpu0-50-2"}
	down.down.Store(true)
	n.ready.Store(true)
	n.router.install(map[string][]routeEntry{"a": {{g: up, weight: 1, lat: lat}}, "b": {{g: down, weight: 1, lat: lat}}})

	ready, waiting, _ := n.readiness()
	require.True(t, ready, "a serves; b's executor is on its way back")
	require.Empty(t, waiting)
	require.Equal(t, "waiting for a gpu-let: its executor on gpu0-50-2 died and is being started again (gpuletd events --kind executor_restart says why)",
		n.notReadyReason("b"))
	require.Equal(t, stateWaiting, n.repositoryStates()["b"])
	ierr := n.notRouted([]*repository.Model{n.catalog.models["b"]}, "b", ErrNoGpulet)
	require.Equal(t, reasonExecutorDown, ierr.reason)
	require.Equal(t, "b is not served for a moment: its executor on gpu0-50-2 died and is being started again (gpuletd events --kind executor_restart says why)", ierr.msg)
	require.True(t, ierr.retryable(), "a client tries again")

	strict := cfg
	strict.StrictReadiness = true
	n.cfg.Store(&strict)
	ready, waiting, _ = n.readiness()
	require.False(t, ready, "strict: every model must serve")
	require.Equal(t, []string{"b"}, waiting)
	n.cfg.Store(&cfg)

	up.down.Store(true)
	ready, waiting, _ = n.readiness()
	require.False(t, ready, "no model serves")
	require.Equal(t, []string{"a", "b"}, waiting)

	up.down.Store(false)
	down.down.Store(false)
	ready, waiting, _ = n.readiness()
	require.True(t, ready)
	require.Empty(t, waiting)
	require.Equal(t, waitingReason, n.notReadyReason("absent"), "a model routed nowhere is not restarting")
}

// A model that a re-plan leaves unrouted while its new gpu-let starts after
// the old ones drained (memory on a GPU) is on its way back too: the node
// stays ready while other models serve. A model that did not serve when the
// re-plan began is not: it waits as at a first start.
func TestReadinessWhileAReplanMovesAModel(t *testing.T) {
	n, lat := twoModelNode(t, nil)
	g := &gpuletRun{id: "gpu0-50-1"}
	n.ready.Store(true)
	n.router.install(map[string][]routeEntry{"a": {{g: g, weight: 1, lat: lat}}, "b": {{g: g, weight: 1, lat: lat}}})
	plan := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "gpu0", GPULets: []gpulet.GPULet{
		{Size: 50, Models: []gpulet.Placement{{Name: "a"}}}, {Size: 70, Models: []gpulet.Placement{{Name: "b"}}}}}}}
	n.moving.Store(n.servedAndPlaced(plan))
	n.router.install(map[string][]routeEntry{"a": {{g: g, weight: 1, lat: lat}}}) // b's old gpu-let drained first

	ready, waiting, _ := n.readiness()
	require.True(t, ready, "a serves; b is on its way back")
	require.Empty(t, waiting)
	require.Equal(t, "waiting for a gpu-let: a re-plan moves it, and its new gpu-let starts once old ones have drained (the memory or cores they held)",
		n.notReadyReason("b"))
	ierr := n.notRouted([]*repository.Model{n.catalog.models["b"]}, "b", ErrNoGpulet)
	require.Equal(t, reasonUnroutable, ierr.reason)
	require.Equal(t, "b is not served for a moment: a re-plan moves it, and its new gpu-let starts once old ones have drained (the memory or cores they held)", ierr.msg)

	n.moving.Store(nil) // the reorganization ended
	ready, waiting, _ = n.readiness()
	require.False(t, ready, "b is not routed and no re-plan is under way")
	require.Equal(t, []string{"b"}, waiting)

	n.router.install(map[string][]routeEntry{"a": {{g: g, weight: 1, lat: lat}}})
	n.moving.Store(n.servedAndPlaced(plan))
	require.Equal(t, map[string]bool{"a": true}, *n.moving.Load(), "b did not serve when this re-plan began")
	ready, waiting, _ = n.readiness()
	require.False(t, ready)
	require.Equal(t, []string{"b"}, waiting)
}

// twoModelNode is a node whose repository holds models a and b (and the
// broken entries given), with the default configuration, nothing routed;
// lat is a latency to route them with.
func twoModelNode(t *testing.T, broken map[string]error) (*node, sched.Latency) {
	t.Helper()
	lat, err := sched.LinearLatency(time.Millisecond, 5*time.Millisecond, 8)
	require.NoError(t, err)
	model := func(name string) *repository.Model { return &repository.Model{Name: name, Family: name} }
	n := &node{router: newRouter(), catalog: &catalog{
		models:    map[string]*repository.Model{"a": model("a"), "b": model("b")},
		pipelines: map[string]*repository.Model{},
		index:     &repository.Index{Broken: broken},
	}}
	cfg := config.Default()
	n.cfg.Store(&cfg)
	return n, lat
}

// A load reads a model folder anew: why its last load was not served (a
// profile that failed, an SLO no batch met) no longer describes it, and
// it is on its way until the re-plan or its profile says otherwise. Before,
// the old reason stood until the model served, and failed the new load.
func TestALoadForgetsWhyTheLastWasNotServed(t *testing.T) {
	n, _ := twoModelNode(t, nil)
	n.catalog.models["a:1"] = &repository.Model{Name: "a:1", Family: "a", Version: 1}
	for _, name := range []string{"a", "a:1", "b"} {
		n.unserved.set(name, "profiling on cpu failed: the executor exited")
		require.Equal(t, stateUnservable, n.modelState(name, n.router.models()))
	}
	n.clearUnserved("a")
	require.Equal(t, stateWaiting, n.modelState("a", n.router.models()))
	require.Equal(t, stateWaiting, n.modelState("a:1", n.router.models()), "its older version too")
	require.Equal(t, stateUnservable, n.modelState("b", n.router.models()), "another model keeps its reason")
}
