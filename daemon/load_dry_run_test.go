package daemon

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
)

// checkOf asks n's load check for name with body.
func checkOf(t *testing.T, n *node, name, body string) loadCheckDoc {
	t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/api/v1/models/"+name+"/check", strings.NewReader(body))
	n.handleAdminLoadCheck(w, mux.SetURLVars(r, map[string]string{"model": name}))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var doc loadCheckDoc
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &doc))
	return doc
}

// A load check reads the folder as the load would, checks it as the load
// does, plans the node with it at today's rates and says what a load now
// would do: serve it where, measure it first, or fail as the load would,
// and what it changes of what serves. It changes nothing.
func TestALoadCheckSaysWhatALoadWouldDo(t *testing.T) {
	ctx := context.Background()
	devices, err := mps.New(mps.Options{Spec: mps.Spec{Mode: mps.ModeCPU}, CPUs: []int{0}})
	require.NoError(t, err)
	n, st := previewNode(t, devices)
	cpu := devices.Inventory().Devices[0]
	repo := t.TempDir()
	write := func(path, data string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(repo, path)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(repo, path), []byte(data), 0o644))
	}
	write("m/1/model.onnx", strings.Repeat("a", 1000))
	write("m/config.yaml", "slo: 1s\nmax_batch_size: 4\n")
	write("fresh/1/model.onnx", "fresh")
	for _, p := range []struct{ name, step string }{{"pipe", "m"}, {"pipe2", "fresh"}} {
		write(p.name+"/config.pbtxt", `name: "`+p.name+`"
platform: "ensemble"
max_batch_size: 4
input [ { name: "x" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 2 ] } ]
parameters { key: "slo" value { string_value: "5s" } }
ensemble_scheduling { step [ { model_name: "`+p.step+`" model_version: -1 input_map { key: "x" value: "x" } output_map { key: "y" value: "y" } } ] }
`)
		write(p.name+"/1/.keep", "")
	}
	write("fresh/config.yaml", "slo: 1s\nmax_batch_size: 4\n")
	n.catalog, n.router = newCatalog([]string{repo}, testRepositoryOptions(0), st, n.events, zap.NewNop()), newRouter()
	n.catalog.opts.Read = fixedReader
	n.uploads, err = newUploads(filepath.Join(t.TempDir(), "uploads"))
	require.NoError(t, err)
	m, _, err := n.catalog.load(ctx, "m", nil, "", nil)
	require.NoError(t, err)
	putProfile(t, st, m, cpu.Type, 2)
	lat, err := sched.LinearLatency(time.Millisecond, 2*time.Millisecond, 4)
	require.NoError(t, err)
	n.router.install(map[string][]routeEntry{"m": {{g: &gpuletRun{id: "g"}, weight: 1, lat: lat}}}) // m serves
	events, err := st.Events(ctx, 0, 0)
	require.NoError(t, err)

	doc := checkOf(t, n, "m", "")
	require.Equal(t, checkServes, doc.Verdict)
	require.True(t, doc.ServesNow)
	require.Empty(t, doc.Changes, "its folder reads as it was loaded")
	require.Len(t, doc.Versions, 1)
	v := doc.Versions[0]
	require.Equal(t, profileOwn, v.Profile)
	require.Equal(t, 1000.0, v.SLOMS)
	require.Equal(t, []string{"cpu 100%"}, v.PlacedOn)

	write("m/config.yaml", "slo: 1ms\nmax_batch_size: 4\n")
	doc = checkOf(t, n, "m", "")
	require.Equal(t, checkRefused, doc.Verdict, "no batch of 2 ms a request meets 1 ms")
	require.Equal(t, http.StatusBadRequest, doc.Status)
	require.Contains(t, doc.Error, "m as it reads now cannot be served on this node: SLO 1 ms")
	require.True(t, strings.HasSuffix(doc.Error, "; m serves on as it was loaded before"), doc.Error)
	n.router.install(nil)
	doc = checkOf(t, n, "m", "")
	require.Equal(t, checkUnplaced, doc.Verdict, "a model that does not serve now is loaded, and says why it is not served")
	require.Contains(t, doc.Versions[0].Reason, "SLO 1 ms: no batch meets it")
	require.Empty(t, doc.Versions[0].PlacedOn)
	n.router.install(map[string][]routeEntry{"m": {{g: &gpuletRun{id: "g"}, weight: 1, lat: lat}}})

	write("m/config.yaml", "slo: 500ms\nmax_batch_size: 2\n")
	doc = checkOf(t, n, "m", "")
	require.Equal(t, checkServes, doc.Verdict)
	require.Equal(t, []string{"version 1: SLO 1s → 500ms (config.yaml)", "version 1: max_batch_size 4 → 2"}, doc.Changes)
	require.Equal(t, 2, doc.Versions[0].MaxBatchSize)

	// A retrained file (the same inputs and size) is placed with the
	// profile of the file it replaces, as the load would lend it; another
	// network is measured first.
	write("m/config.yaml", "slo: 1s\nmax_batch_size: 4\n")
	write("m/1/model.onnx", strings.Repeat("b", 1000))
	doc = checkOf(t, n, "m", "")
	require.Equal(t, checkServes, doc.Verdict)
	require.Equal(t, profileLent, doc.Versions[0].Profile)
	require.Contains(t, doc.Versions[0].Note, "placed with the profile of the file it replaces (sha256 "+m.SHA256[:12]+")")
	require.NotEmpty(t, doc.Versions[0].PlacedOn)
	require.Len(t, doc.Changes, 1)
	require.Contains(t, doc.Changes[0], "version 1: a new model file")
	write("m/1/model.onnx", strings.Repeat("b", 3000))
	doc = checkOf(t, n, "m", "")
	require.Equal(t, checkMeasuredFirst, doc.Verdict)
	require.Equal(t, profileNone, doc.Versions[0].Profile)
	require.Contains(t, doc.Versions[0].Unprofiled, "gpuletd profile m --device cpu")
	require.Empty(t, doc.Versions[0].PlacedOn)

	// A new version in place of the served one.
	write("m/1/model.onnx", strings.Repeat("a", 1000))
	write("m/2/model.onnx", strings.Repeat("a", 1000))
	doc = checkOf(t, n, "m", "")
	require.Equal(t, checkServes, doc.Verdict, "the same file: its profile")
	require.Equal(t, []string{"version 2 added", "version 1 no longer served"}, doc.Changes)
	require.NoError(t, os.RemoveAll(filepath.Join(repo, "m", "2")))

	// A model not served: measured first; a folder the repository lacks:
	// the load's 404.
	doc = checkOf(t, n, "fresh", "")
	require.Equal(t, checkMeasuredFirst, doc.Verdict)
	require.False(t, doc.ServesNow)
	require.Empty(t, doc.Changes)
	doc = checkOf(t, n, "nosuch", "")
	require.Equal(t, checkRefused, doc.Verdict)
	require.Equal(t, http.StatusNotFound, doc.Status)
	require.Contains(t, doc.Error, "the repository has no such model")

	// A pipeline serves where its steps do.
	doc = checkOf(t, n, "pipe", "")
	require.Equal(t, checkPipeline, doc.Verdict, doc.Reason)
	doc = checkOf(t, n, "pipe2", "")
	require.Equal(t, checkStepsNotServed, doc.Verdict)
	require.Contains(t, doc.Reason, "step[0] (fresh): the model is not served; load it first")

	// Files of the request in place of the folder, as the load takes
	// them: read, then removed.
	file := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", 1000)))
	doc = checkOf(t, n, "m", `{"parameters": {"config": "{\"max_batch_size\": 4, \"parameters\": {\"slo\": {\"string_value\": \"2s\"}}}", "file:3/model.onnx": "`+file+`"}}`)
	require.Equal(t, checkServes, doc.Verdict)
	require.Equal(t, 3, doc.Versions[0].Version)
	require.Equal(t, 2000.0, doc.Versions[0].SLOMS)
	left, err := os.ReadDir(n.uploads.dir)
	require.NoError(t, err)
	require.Empty(t, left, "the uploaded files are removed")
	doc = checkOf(t, n, "m", `{"parameters": {"file:3/model.onnx": "`+file+`"}}`)
	require.Equal(t, checkRefused, doc.Verdict, "files without the configuration")
	require.Equal(t, http.StatusBadRequest, doc.Status)

	// Nothing changed.
	now, ok := n.catalog.get("m")
	require.True(t, ok)
	require.Same(t, m, now, "the model served is the one loaded")
	_, ok = n.catalog.get("fresh")
	require.False(t, ok)
	_, ok = n.catalog.pipeline("pipe")
	require.False(t, ok)
	require.Nil(t, n.current.Load(), "no plan applied")
	require.Empty(t, n.sup.running)
	after, err := st.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Equal(t, events, after, "nothing said")
	require.Empty(t, n.book.loans, "no profile lent")
}

// A request that is not a load request is refused as the load refuses it.
func TestALoadCheckOfABadRequestIsRefused(t *testing.T) {
	devices, err := mps.New(mps.Options{Spec: mps.Spec{Mode: mps.ModeCPU}, CPUs: []int{0}})
	require.NoError(t, err)
	n, _ := previewNode(t, devices)
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/api/v1/models/mlp/check", strings.NewReader(`{"parameters": {"config": 3}}`))
	n.handleAdminLoadCheck(w, mux.SetURLVars(r, map[string]string{"model": "mlp"}))
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Contains(t, w.Body.String(), `parameter \"config\" must be a string`)
}

// The models a load would take room from are those the plan with it
// leaves more of their rate unplaced than the plan without it.
func TestDisplacedAreTheModelsALoadLeavesShort(t *testing.T) {
	before := &gpulet.Plan{Unscheduled: map[string]float64{"short": 5}}
	after := &gpulet.Plan{Unscheduled: map[string]float64{"short": 6, "pushed": 12.5, "new": 3},
		Reasons: map[string]string{"pushed": "12.5 req/s left over: no room on any gpu-let"}}
	others := []*repository.Model{{Name: "short"}, {Name: "pushed"}, {Name: "fine"}}
	require.Equal(t, map[string]string{"pushed": "12.5 req/s left over: no room on any gpu-let",
		"short": "6 req/s of its planned rate would have no gpu-let (5 without this load)"},
		displaced(before, after, others))
	require.Nil(t, displaced(before, before, others))
}
