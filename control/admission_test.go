package control

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

func TestAdmissionHoldsBackOnlyHeldModels(t *testing.T) {
	plan := &gpulet.Plan{
		GPUs: []gpulet.GPUPlan{{ID: "g0", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{
			{Name: "flood", Rate: 100, Batch: 4, SLOMS: 50}, {Name: "calm", Rate: 10, Batch: 1, SLOMS: 50},
		}}}}},
		Unscheduled: map[string]float64{"flood": 300},
	}
	a := NewAdmission(plan, nil)
	require.Equal(t, 100.0, a.Limited("flood"))
	require.Zero(t, a.Limited("calm"))

	admitted := func(model string, perSecond float64, d time.Duration) int {
		n := 0
		step := time.Duration(float64(time.Second) / perSecond)
		for at := time.Duration(0); at < d; at += step {
			if a.Admit(model, time.Hour+at) {
				n++
			}
		}
		return n
	}
	got := admitted("flood", 400, 10*time.Second)
	require.InDelta(t, 1000, got, 10, "400 req/s asked, 100 req/s admitted (plus the burst)")
	alone := &gpulet.Plan{
		GPUs:        []gpulet.GPUPlan{{ID: "g0", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{{Name: "flood", Rate: 100, Batch: 4, SLOMS: 50}}}}}},
		Unscheduled: map[string]float64{"flood": 300},
	}
	require.Zero(t, NewAdmission(alone, nil).Limited("flood"), "alone on its gpu-lets it is not limited")
	require.Equal(t, 4000, admitted("calm", 400, 10*time.Second), "a model not held back is not limited")
	require.True(t, NewAdmission(nil, nil).Admit("x", 0))
	var none *Admission
	require.True(t, none.Admit("x", 0))

	next := NewAdmission(plan, a)
	n := 0
	for next.Admit("flood", time.Hour+10*time.Second) {
		n++
	}
	require.LessOrEqual(t, n, 1, "a new plan carries the nearly empty bucket over, not a full burst")
}

func TestHeldBackFloodIsNoNewSurge(t *testing.T) {
	plan := &gpulet.Plan{
		GPUs: []gpulet.GPUPlan{{ID: "g0", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{
			{Name: "flood", Rate: 22, Batch: 4}, {Name: "calm", Rate: 10, Batch: 1},
		}}}}},
		Unscheduled: map[string]float64{"flood": 48},
	}
	require.Equal(t, map[string]float64{"flood": 70, "calm": 10}, PlannedFor(plan))
	estimates := map[string]float64{"flood": 70, "calm": 10 / 1.2} // what the plan was made for
	for _, tc := range []struct {
		name  string
		short map[string]float64
		want  string
	}{
		{"the flood as planned", map[string]float64{"flood": 70, "calm": 10}, ""},
		{"the flood grows", map[string]float64{"flood": 300, "calm": 10}, "rate of flood surged"},
		{"another model surges", map[string]float64{"flood": 70, "calm": 40}, "rate of calm surged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why, _ := SurgeReplan(SurgeInput{Now: time.Hour, Plan: plan, Headroom: Headroom, Short: Short{Rates: tc.short}, Estimates: estimates, Folded: estimates})
			require.Equal(t, tc.want, why)
		})
	}
	why, _ := SurgeReplan(SurgeInput{Now: time.Hour, Headroom: Headroom, Short: Short{Rates: map[string]float64{"calm": 100}}})
	require.Empty(t, why, "no plan yet")
}
