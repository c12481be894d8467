package daemon

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/gpulet"
)

// planRatesOnly collects what collectPlanRates reports of one plan.
type planRatesOnly struct {
	n    *node
	plan *gpulet.Plan
}

func (p planRatesOnly) Describe(ch chan<- *prometheus.Desc) {
	ch <- descAssigned
	ch <- descUnscheduled
	ch <- descExtraHeadroom
}
func (p planRatesOnly) Collect(ch chan<- prometheus.Metric) { collectPlanRates(p.n, p.plan, ch) }

// TestUnscheduledRateIsAMetric: an overloaded plan's held-back rate is
// reported per model, and every other served model reports 0, so that an
// alert can tell "placed" from "not scraped"; so is the headroom the miss
// rule added.
func TestUnscheduledRateIsAMetric(t *testing.T) {
	n, _ := twoModelNode(t, nil)
	missed := &gpulet.Plan{GPUs: []gpulet.GPUPlan{{ID: "gpu0", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{{Name: "a", Rate: 300}}}}}}}
	n.misses.m.Check(control.MissInput{Plan: missed, Settled: true, Tallies: map[string]control.Tally{"a": {}}})
	require.NotEmpty(t, n.misses.m.Check(control.MissInput{Now: time.Minute, Plan: missed, Settled: true, Tallies: map[string]control.Tally{"a": {Answered: 100, Missed: 30}},
		Estimates: map[string]float64{"a": 250}, Headroom: control.Headroom}))
	plan := &gpulet.Plan{
		GPUs: []gpulet.GPUPlan{{ID: "gpu0", GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{
			{Name: "a", Rate: 300}, {Name: "b", Rate: 120}}}}}},
		Unscheduled: map[string]float64{"b": 80},
	}
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(planRatesOnly{n, plan}))
	fams, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]map[string]float64{}
	for _, f := range fams {
		got[f.GetName()] = map[string]float64{}
		for _, m := range f.GetMetric() {
			got[f.GetName()][m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	require.Equal(t, map[string]map[string]float64{
		"gpuletd_model_assigned_rate":    {"a": 300, "b": 120},
		"gpuletd_model_unscheduled_rate": {"a": 0, "b": 80},
		"gpuletd_model_extra_headroom":   {"a": control.MissStep, "b": 0},
	}, got)
}
