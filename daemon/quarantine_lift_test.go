package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/profiler/store"
)

// An operator lifts a model's quarantine: its quarantined, suspect and
// hanging requests run again as any other, the answer says how many there
// were, and an info event says so; an unknown model is 404.
func TestTheOperatorLiftsAQuarantine(t *testing.T) {
	n, st, m := servingNode(t)
	older := mlpFile("b", 1_000_000) // version 1 served beside the newest
	older.Name, older.Family, older.Version, older.Config.SLO = repository.VersionKey(m.Family, 1), m.Family, 1, config.Duration(time.Second)
	m.Version = 2
	require.NoError(t, n.catalog.add(context.Background(), older))

	now := time.Now()
	bad, suspect, hung := digestOf(t, 1), digestOf(t, 2), digestOf(t, 3)
	lost := func(d inputsDigest) lostRequest { return lostRequest{model: m.Name, sha: m.SHA256, digest: d} }
	e1, e2 := executorGen{"g1", 1}, executorGen{"g1", 2}
	n.crashes.lost(e1, 1, lost(bad), now, time.Time{})
	n.crashes.ended(e1, endCrashed, []uint64{1}, now) // alone: quarantined
	n.crashes.lost(e2, 2, lost(suspect), now, time.Time{})
	n.crashes.lost(e2, 4, lost(hung), now, now.Add(time.Minute))
	n.crashes.ended(e2, endCrashed, []uint64{2, 3}, now)
	n.crashes.lost(executorGen{"g2", 1}, 5, lost(hung), now, now.Add(time.Minute))
	n.crashes.lost(executorGen{"g3", 1}, 6, lostRequest{model: older.Name, sha: older.SHA256, digest: bad}, now, time.Time{})
	n.crashes.ended(executorGen{"g3", 1}, endCrashed, []uint64{6}, now)
	st0, _ := n.crashes.standingOf(m.Name, m.SHA256, bad, now)
	require.Equal(t, standingQuarantined, st0)

	lift := func(model string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodDelete, "/api/v1/models/"+model+"/quarantine", nil)
		n.handleLiftQuarantine(w, mux.SetURLVars(r, map[string]string{"model": model}))
		return w
	}
	w := lift(m.Name)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var got quarantineLifted
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
	require.Equal(t, quarantineLifted{Model: m.Family, Quarantined: 2, Suspects: 1, Hanging: 1}, got, "both versions'")
	for _, d := range []inputsDigest{bad, suspect, hung} {
		s, _ := n.crashes.standingOf(m.Name, m.SHA256, d, now)
		require.Equal(t, standingClear, s)
	}
	require.False(t, n.crashes.watching(m.Name), "its requests are no longer digested")
	require.False(t, n.crashes.watching(older.Name))
	evs, err := st.Events(context.Background(), 0, 0)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	require.Equal(t, EventRequestQuarantined, last.Kind)
	require.Equal(t, store.SeverityInfo, last.Severity, "not the warning the alert counts")
	require.Equal(t, "quarantine of "+m.Family+" lifted by the operator: 2 quarantined, 1 suspect and 1 hanging requests run again as any other", last.Message)

	require.Equal(t, http.StatusNotFound, lift("nosuch").Code)
}

// gpuletd_model_requests_held_back says, per served model, how many of its
// requests are quarantined, suspects and hanging.
func TestHeldBackRequestsAreMetrics(t *testing.T) {
	n, _, m := servingNode(t)
	now := time.Now()
	e := executorGen{"g1", 1}
	n.crashes.lost(e, 1, lostRequest{model: m.Name, sha: m.SHA256, digest: digestOf(t, 1)}, now, time.Time{})
	n.crashes.lost(e, 2, lostRequest{model: m.Name, sha: m.SHA256, digest: digestOf(t, 2)}, now, time.Time{})
	n.crashes.ended(e, endCrashed, []uint64{1, 2}, now)

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(heldBackOnly{n, now})
	fams, err := reg.Gather()
	require.NoError(t, err)
	require.Len(t, fams, 1)
	got := map[string]float64{}
	for _, mt := range fams[0].GetMetric() {
		labels := map[string]string{}
		for _, l := range mt.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		require.Equal(t, m.Name, labels["model"])
		got[labels["kind"]] = mt.GetGauge().GetValue()
	}
	require.Equal(t, map[string]float64{"quarantined": 0, "suspect": 2, "hanging": 0}, got)
}

// heldBackOnly is the node collector's gpuletd_model_requests_held_back
// alone.
type heldBackOnly struct {
	n   *node
	now time.Time
}

func (h heldBackOnly) Describe(ch chan<- *prometheus.Desc) { ch <- descHeldBack }
func (h heldBackOnly) Collect(ch chan<- prometheus.Metric) { collectHeldBack(h.n, h.now, ch) }

// servingNode is a node with a store, its events and a catalog serving
// one model, version 1 of the folder mlp.
func servingNode(t *testing.T) (*node, *store.Store, *repository.Model) {
	t.Helper()
	n, st := historyNode(t)
	n.catalog = newCatalog([]string{t.TempDir()}, testRepositoryOptions(0), st, n.events, zap.NewNop())
	m := mlpFile("a", 1_000_000)
	m.Family, m.Version, m.Config.SLO = m.Name, 1, config.Duration(time.Second)
	require.NoError(t, n.catalog.add(context.Background(), m))
	return n, st, m
}
