package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/daemon/config"
	pb "github.com/gpulet/gpuletd/executor/executorpb"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/mps"
	"github.com/gpulet/gpuletd/profiler/store"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// A preview whose rates name a model the node does not serve is refused
// with the names it does, rather than planned without it (a misspelt name
// gave a schedulable plan that left the model out); so are a negative rate
// and an unknown planner.
func TestPreviewRefusesBadRequests(t *testing.T) {
	n, _ := twoModelNode(t, nil)
	tests := []struct {
		name, body, want string
	}{
		{"one unknown", `{"rates": {"a": 5, "resnt50": 10}}`, `unknown model "resnt50": the node plans for a, b`},
		{"several, sorted", `{"rates": {"z": 1, "c": 2}}`, `unknown models "c", "z": the node plans for a, b`},
		{"not JSON", `{"rates": 5}`, "bad preview request: json"},
		{"many, the first ten", `{"rates": {` + manyRates(25) + `}}`,
			`unknown models "m00", "m01", "m02", "m03", "m04", "m05", "m06", "m07", "m08", "m09" and 15 more: the node plans for a, b`},
		{"a negative rate", `{"rates": {"a": -5}}`, "bad preview request: rates: a: -5 req/s: want a rate from 0 to 1e+09"},
		{"an unknown planner", `{"algorithm": "fastest"}`, `bad preview request: algorithm "fastest": want one of gpulet, gpulet-int, sbp, ideal`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			n.handleAdminPreview(w, httptest.NewRequest(http.MethodPost, "/api/v1/plan/preview", strings.NewReader(tc.body)))
			require.Equal(t, http.StatusBadRequest, w.Code)
			var answer struct{ Error string }
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &answer))
			require.Contains(t, answer.Error, tc.want)
		})
	}
}

// manyRates are n rates of models m00, m01, … as JSON members.
func manyRates(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, fmt.Sprintf(`"m%02d": 1`, i))
	}
	return strings.Join(parts, ", ")
}

// previewOf posts body to the preview and decodes its answer.
func previewOf(t *testing.T, n *node, body string) previewDoc {
	t.Helper()
	w := httptest.NewRecorder()
	n.handleAdminPreview(w, httptest.NewRequest(http.MethodPost, "/api/v1/plan/preview", strings.NewReader(body)))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var doc previewDoc
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &doc))
	return doc
}

// previewNode is a node of devices serving mlp, running nothing yet: on
// the CPU device with a profile of 2 ms a request and 400 MB for models,
// on an emulated GPU as the reference set's alexnet.
func previewNode(t *testing.T, devices *mps.Manager) (*node, *store.Store) {
	t.Helper()
	t.Cleanup(func() { require.NoError(t, devices.Close(context.Background())) })
	n, st := historyNode(t)
	n.devices, n.book = devices, newProfileBook(st)
	n.catalog = newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), st, n.events, zap.NewNop())
	n.rates, n.stepRates = newRateMeter(0.5, time.Now()), newRateMeter(0.5, time.Now())
	n.sup = &supervisor{running: map[string]*gpuletRun{}}
	n.readHost = func() hostMemory {
		return hostMemory{TotalBytes: 24 << 30, DaemonBytes: 64 << 20, ModelsBytes: 400 << 20}
	}
	m := mlpFile("a", 1_000_000)
	m.Version, m.Config.SLO = 1, config.Duration(time.Second)
	m.Config.Profile = "alexnet" // on an emulated GPU: the reference set's curve and memory
	require.NoError(t, n.catalog.add(context.Background(), m))
	for _, d := range devices.Inventory().Devices {
		putProfile(t, st, m, d.Type, 2)
	}
	return n, st
}

// A preview is the plan a re-plan would apply, with its headroom and laid
// out where it moves the least (it planned the rates as they were, and
// left both out), and says what applying it would change of what runs;
// it applies nothing.
func TestPreviewIsWhatAReplanWouldApply(t *testing.T) {
	ctx := context.Background()
	devices, err := mps.New(mps.Options{Spec: mps.Spec{Mode: mps.ModeCPU}, CPUs: []int{0}})
	require.NoError(t, err)
	n, st := previewNode(t, devices)
	cpu := devices.Inventory().Devices[0]

	before, err := st.Events(ctx, 0, 0)
	require.NoError(t, err)
	doc := previewOf(t, n, `{"rates": {"mlp": 10}}`)
	require.Equal(t, gpulet.Algo(config.Default().Scheduler.Algorithm), doc.Algorithm)
	require.Equal(t, control.Headroom, doc.Headroom)
	require.Equal(t, map[string]float64{"mlp": 10}, doc.Rates)
	require.Equal(t, map[string]float64{"mlp": control.PlanRate(10, control.Headroom)}, doc.Plan.Assigned(), "planned with the headroom")
	require.False(t, doc.Unchanged)
	require.Len(t, doc.Changes, 1, "nothing runs: one gpu-let to start")
	require.Equal(t, gpulet.ActionStart, doc.Changes[0].Action)
	require.Equal(t, cpu.ID, doc.Changes[0].GPU)
	require.Equal(t, []string{"start cpu gpu-let 0 (100%) for mlp"}, doc.Steps)
	require.NotNil(t, doc.Capacity)
	require.Equal(t, 10.0, doc.Capacity.Load, "the capacity of the rates previewed")
	require.Greater(t, doc.Capacity.Ratio, 1.0)
	require.True(t, doc.Capacity.CPU)
	require.Nil(t, n.current.Load(), "nothing applied")
	require.Empty(t, n.sup.running)
	after, err := st.Events(ctx, 0, 0)
	require.NoError(t, err)
	require.Equal(t, before, after, "nothing said")

	// What runs is the preview's plan: nothing to change.
	let := doc.Plan.GPUs[0].GPULets[0]
	n.sup.running["x"] = &gpuletRun{device: cpu, planned: let, models: map[string]*pb.LoadModelRequest{"mlp": {Name: "mlp"}}}
	again := previewOf(t, n, `{"rates": {"mlp": 10}}`)
	require.True(t, again.Unchanged)
	require.Empty(t, again.Changes)
	require.Empty(t, again.Steps)
	require.Equal(t, doc.Plan, again.Plan)

	require.Empty(t, again.Crowded)

	// What runs holds mlp in a smaller gpu-let: the plan resizes it. On
	// the CPU device the new size starts over the old one whatever the
	// memory: nothing waits.
	half := let
	half.Size = 50
	n.sup.running["x"].planned = half
	resize := previewOf(t, n, `{"rates": {"mlp": 10}}`)
	require.Len(t, resize.Changes, 1)
	require.Equal(t, gpulet.ActionResize, resize.Changes[0].Action)
	require.Empty(t, resize.Crowded)

	// Another planner, asked for by name.
	sbp := previewOf(t, n, `{"rates": {"mlp": 10}, "algorithm": "sbp"}`)
	require.Equal(t, gpulet.AlgoSBP, sbp.Algorithm)
	require.Equal(t, gpulet.AlgoSBP, sbp.Plan.Algo)
}

// On a GPU a resize loads a second copy beside the first: two of mlp's
// 978 MB (the reference set's alexnet on a V100) do not fit in 1.5 GiB
// until the old gpu-let drains, and the preview says so.
func TestPreviewSaysWhatWaitsForRoom(t *testing.T) {
	devices, err := mps.New(mps.Options{Spec: mps.Spec{Mode: mps.ModeList, Entries: []mps.Entry{
		{Kind: mps.KindEmulated, Profiles: "igniter-v100", Count: 1, MemoryGB: 1.5}}}, CPUs: []int{0}})
	require.NoError(t, err)
	n, _ := previewNode(t, devices)
	gpu := devices.Inventory().Devices[0]
	doc := previewOf(t, n, `{"rates": {"mlp": 10}}`)
	require.Empty(t, doc.Crowded, "nothing runs")
	let := doc.Plan.GPUs[0].GPULets[0]
	require.Less(t, let.Size, 100, "a gpu-let of part of the GPU")

	whole := let
	whole.Size = 100
	n.sup.running["x"] = &gpuletRun{device: gpu, planned: whole, models: map[string]*pb.LoadModelRequest{"mlp": {Name: "mlp"}}}
	doc = previewOf(t, n, `{"rates": {"mlp": 10}}`)
	require.Len(t, doc.Changes, 1)
	require.Equal(t, gpulet.ActionResize, doc.Changes[0].Action)
	require.Equal(t, []string{gpu.ID}, doc.Crowded)
	require.Equal(t, []string{"on " + gpu.ID + " what starts and loads does not fit beside what runs there: it waits for the old " +
		"gpu-lets to drain, and a model only they serve there goes unserved meanwhile"}, doc.Notes)
}
