package daemon

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/profiler/store"
)

// historyNode is a node with a real store and the default configuration,
// for the history's tests.
func historyNode(t *testing.T) (*node, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	n := &node{log: zap.NewNop(), st: st, events: newEvents(st, zap.NewNop())}
	cfg := config.Default()
	n.cfg.Store(&cfg)
	return n, st
}

// onePlan is a plan of one gpu-let of size 50 on cpu running models a and b
// at the given batches and rates.
func onePlan(batchA, batchB int, rateA, rateB float64) *gpulet.Plan {
	return &gpulet.Plan{Schedulable: true, GPUs: []gpulet.GPUPlan{{ID: "cpu", GPULets: []gpulet.GPULet{{Size: 50,
		Models: []gpulet.Placement{{Name: "a", Batch: batchA, Rate: rateA}, {Name: "b", Batch: batchB, Rate: rateB}}}}}}}
}

// A re-plan's plan is saved at start, when an operator asks for one and
// when it changes what runs where, not every period for rates that moved: a node re-planning every 20 s
// saved a row each time.
func TestReplansSaveOnlyPlansThatChangeWhatRuns(t *testing.T) {
	overloaded := onePlan(4, 2, 10, 5)
	overloaded.Schedulable = false
	overloaded.Unscheduled = map[string]float64{"a": 3}
	steps := []struct {
		name   string
		plan   *gpulet.Plan
		reason string
		saved  bool
	}{
		{"the first plan", onePlan(4, 2, 10, 5), "start", true},
		{"the same at other rates", onePlan(4, 2, 11.6, 4.2), "period", false},
		{"a surge that changes nothing", onePlan(4, 2, 30, 4.2), "surge", false},
		{"a batch changes", onePlan(8, 2, 30, 4.2), "period", true},
		{"a model cannot be placed in full", overloaded, "period", true},
		{"still not, at another rate", func() *gpulet.Plan { p := *overloaded; p.Unscheduled = map[string]float64{"a": 9}; return &p }(), "period", false},
		{"back to the batch before", onePlan(8, 2, 10, 5), "period", true},
		{"a restart saves even the same plan", onePlan(8, 2, 10, 5), "start", true},
		{"so does an operator's re-plan", onePlan(8, 2, 10, 5), "manual", true},
		{"but not the next period's", onePlan(8, 2, 10, 5), "period", false},
	}
	n, st := historyNode(t)
	ctx := context.Background()
	want := 0
	for _, s := range steps {
		n.recordPlan(ctx, s.plan, s.reason)
		if s.saved {
			want++
		}
		got, err := st.Plans(ctx, 0, 0)
		require.NoError(t, err)
		require.Len(t, got, want, s.name)
		if s.saved {
			require.Equal(t, s.reason, got[0].Reason, s.name)
			require.JSONEq(t, string(mustJSON(s.plan)), string(got[0].Plan), s.name)
		}
	}
}

// A plan the store could not take is saved by the next re-plan even if
// nothing changed in between.
func TestAPlanNotSavedIsSavedNextTime(t *testing.T) {
	n, st := historyNode(t)
	failed, cancel := context.WithCancel(context.Background())
	cancel()
	n.recordPlan(failed, onePlan(4, 2, 10, 5), "start")
	ctx := context.Background()
	got, err := st.Plans(ctx, 0, 0)
	require.NoError(t, err)
	require.Empty(t, got)
	n.recordPlan(ctx, onePlan(4, 2, 10, 5), "period")
	got, err = st.Plans(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, got, 1)
}

// A model that cannot be placed is said once in the events, again when the
// reason changes (numbers aside) or after it was placed in between.
func TestPlacementWarningsAreRecordedWhenTheyChange(t *testing.T) {
	share := func(c int) string {
		return "the node is overloaded: its fair share is " + strconv.Itoa(c) + " req/s"
	}
	steps := []struct {
		name    string
		missing map[string]string
		short   map[string]float64
		reasons map[string]string
		want    []string // messages recorded, in model order
	}{
		{name: "a has no profile", missing: map[string]string{"a": "no profile on cpu"},
			want: []string{"model cannot be placed: no profile on cpu"}},
		{name: "the next period", missing: map[string]string{"a": "no profile on cpu"}},
		{name: "b is short of its rate too", missing: map[string]string{"a": "no profile on cpu"},
			short: map[string]float64{"b": 12}, reasons: map[string]string{"b": share(40)},
			want: []string{"model cannot be placed in full: " + share(40)}},
		{name: "b's share moves", missing: map[string]string{"a": "no profile on cpu"},
			short: map[string]float64{"b": 20}, reasons: map[string]string{"b": share(35)}},
		{name: "a is profiled and placed, b still short", short: map[string]float64{"b": 20}, reasons: map[string]string{"b": share(35)}},
		{name: "a loses its profile again", missing: map[string]string{"a": "no profile on cpu"},
			short: map[string]float64{"b": 20}, reasons: map[string]string{"b": share(35)},
			want: []string{"model cannot be placed: no profile on cpu"}},
		{name: "a's reason changes", missing: map[string]string{"a": "its profile is corrupt"},
			short: map[string]float64{"b": 20}, reasons: map[string]string{"b": share(35)},
			want: []string{"model cannot be placed: its profile is corrupt"}},
	}
	n, st := historyNode(t)
	ctx := context.Background()
	var seen int64
	for _, s := range steps {
		plan := onePlan(4, 2, 10, 5)
		plan.GPUs[0].GPULets[0].Models = plan.GPUs[0].GPULets[0].Models[1:] // b alone is placed
		plan.Unscheduled, plan.Reasons = s.short, s.reasons
		n.reportUnplaced(s.missing, plan)
		evs, err := st.Events(ctx, seen, 0)
		require.NoError(t, err)
		var got []string
		for _, e := range evs {
			require.Equal(t, EventPlan, e.Kind)
			got = append(got, e.Message)
			seen = e.ID
		}
		require.Equal(t, s.want, got, s.name)
	}
	n.reportUnplaced(map[string]string{"a": "no profile on cpu"}, nil)
	evs, err := st.Events(ctx, seen, 0)
	require.NoError(t, err)
	require.Len(t, evs, 1, "a re-plan that made no plan still says why a is not placed")
}

// The store keeps history_retention of events and plans, and always the
// plan in force; 0 keeps everything.
func TestHistoryIsPrunedToTheRetention(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		retention time.Duration
		events    int
		plans     int
	}{
		{"a day", 24 * time.Hour, 2, 2},
		{"an hour", time.Hour, 1, 1},
		{"keep everything", 0, 4, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, st := historyNode(t)
			cfg := *n.conf()
			cfg.HistoryRetention = config.Duration(tt.retention)
			n.cfg.Store(&cfg)
			ctx := context.Background()
			for _, age := range []time.Duration{40 * 24 * time.Hour, 3 * 24 * time.Hour, 2 * time.Hour, time.Minute} {
				_, err := st.AppendEvent(ctx, store.Event{At: now.Add(-age), Kind: EventPlan, Severity: store.SeverityInfo, Message: "m"})
				require.NoError(t, err)
			}
			var newest int64
			for _, age := range []time.Duration{40 * 24 * time.Hour, 10 * time.Hour, 2 * time.Hour} {
				id, err := st.SavePlan(ctx, store.PlanRecord{CreatedAt: now.Add(-age), Algorithm: "gpulet-int", Plan: mustJSON(onePlan(4, 2, 1, 1))})
				require.NoError(t, err)
				newest = id
			}
			n.pruneHistoryOnce(ctx, now)
			evs, err := st.Events(ctx, 0, 0)
			require.NoError(t, err)
			require.Len(t, evs, tt.events)
			plans, err := st.Plans(ctx, 0, 0)
			require.NoError(t, err)
			require.Len(t, plans, tt.plans)
			require.Equal(t, newest, plans[0].ID, "the plan in force is kept")
		})
	}
}
