package control

import (
	"testing"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/stretchr/testify/require"
)

// keepPlan places a at 120 req/s and b at 60 on one GPU each.
func keepPlan() *gpulet.Plan {
	return &gpulet.Plan{GPUs: []gpulet.GPUPlan{
		{ID: "g0", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{{Name: "a", Batch: 8, Rate: 120}}}}},
		{ID: "g1", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{{Name: "b", Batch: 4, Rate: 60}}}}},
	}}
}

// Packing an idle node (scheduler.idle_plan: pack), a spread plan is not
// kept, and an idle node's plan for the minimum rates is judged as any
// other.
func TestKeepPlanPackingIdle(t *testing.T) {
	spread := keepPlan()
	spread.Spread = true
	idle := map[string]float64{"a": 0.5, "b": 0}
	require.False(t, KeepPlan(spread, idle, nil, false))
	require.False(t, KeepPlan(spread, map[string]float64{"a": 100, "b": 50}, nil, false))
	packed := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "g0", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{
		{Name: "a", Batch: 1, Rate: PlanRate(0, Headroom)}, {Name: "b", Batch: 1, Rate: PlanRate(0, Headroom)}}}}}}}
	require.True(t, KeepPlan(packed, idle, nil, false))
	require.False(t, KeepPlan(packed, idle, nil, true), "spreading, an idle node re-plans")
}

func TestKeepPlan(t *testing.T) {
	overloaded := keepPlan()
	overloaded.Unscheduled = map[string]float64{"b": 20}
	unplaceable := keepPlan()
	unplaceable.Unscheduled, unplaceable.Unplaceable = map[string]float64{"big": 1.2}, []string{"big"}
	spread := keepPlan()
	spread.Spread = true
	for _, tc := range []struct {
		name      string
		plan      *gpulet.Plan
		estimates map[string]float64
		want      bool
	}{
		{"the headroom spent in part", keepPlan(), map[string]float64{"a": 105, "b": 54}, true},
		{"every model at its place", keepPlan(), map[string]float64{"a": 120, "b": 60}, true},
		{"a model past its place", keepPlan(), map[string]float64{"a": 121, "b": 50}, false},
		{"a model shrunk keeps its place", keepPlan(), map[string]float64{"a": 70, "b": 35}, true},
		{"a model shrunk below two thirds gives it back", keepPlan(), map[string]float64{"a": 65, "b": 35}, false},
		{"a model with no traffic left gives it back", keepPlan(), map[string]float64{"a": 100, "b": 0}, false},
		{"a model the plan does not know", keepPlan(), map[string]float64{"a": 100, "c": 0}, false},
		{"overloaded: the shares follow the demand", overloaded, map[string]float64{"a": 100, "b": 50}, false},
		{"unplaceable at any rate does not count", unplaceable, map[string]float64{"a": 100, "b": 50, "big": 30}, true},
		{"no plan", nil, map[string]float64{"a": 1}, false},
		{"idle: a spread plan stays", spread, map[string]float64{"a": 0.5, "b": 0}, true},
		{"idle: a plan for traffic spreads again", keepPlan(), map[string]float64{"a": 0.5, "b": 0}, false},
		{"a spread plan keeps a load far below its room", spread, map[string]float64{"a": 10, "b": 0}, true},
		{"a spread plan re-plans for a model past its room with the headroom", spread, map[string]float64{"a": 101, "b": 0}, false},
		{"a spread plan keeps a model within its room with the headroom", spread, map[string]float64{"a": 100, "b": 0}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, KeepPlan(tc.plan, tc.estimates, nil, true))
		})
	}
}

// A period whose own rate is past a model's place re-plans although the
// estimate, still climbing after a rise, fits.
func TestKeepPlanReadsThePeriodsOwnRate(t *testing.T) {
	est := map[string]float64{"a": 100, "b": 50}
	require.True(t, KeepPlan(keepPlan(), est, map[string]float64{"a": 110, "b": 40}, true))
	require.False(t, KeepPlan(keepPlan(), est, map[string]float64{"a": 125, "b": 50}, true))
}

func TestSettled(t *testing.T) {
	plan := keepPlan()
	running := func(p *gpulet.Plan) []Serving[int] {
		var out []Serving[int]
		for i, g := range p.GPUs {
			for _, let := range g.GPULets {
				out = append(out, Serving[int]{GPU: g.ID, Let: let, H: i})
			}
		}
		return out
	}
	require.True(t, Settled(running(plan), plan))
	require.False(t, Settled(running(plan)[:1], plan), "b's gpu-let did not start")
	lost := keepPlan()
	lost.GPUs[1].GPULets[0].Models = nil
	require.False(t, Settled(running(lost), plan), "b did not load")
	more := keepPlan()
	more.GPUs = append(more.GPUs, gpulet.GPUPlan{ID: "g2", GPULets: []gpulet.GPULet{{Size: 50, Models: []gpulet.Placement{{Name: "a", Batch: 2, Rate: 5}}}}})
	require.False(t, Settled(running(more), plan), "a gpu-let the plan drops still runs")
	require.False(t, Settled(running(plan), nil))
}
