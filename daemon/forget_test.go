package daemon

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/gpulet"
)

// A model that is no longer served leaves nothing behind: its rate no
// longer keeps the next period from keeping the plan, and its statistics
// and series are gone, while a served model's stay.
func TestAnUnloadedModelIsForgotten(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	n := planOfANode(string(gpulet.AlgoGpuletInt), true)
	n.catalog.models = map[string]*repository.Model{"a": {Name: "a"}}
	n.rates, n.stepRates = newRateMeter(0.5, t0), newRateMeter(0.5, t0)
	n.metrics = newMetrics(n)
	cfg := config.Default()
	cfg.Metrics.TritonNames, cfg.Metrics.TritonSummaries = true, true
	n.cfg.Store(&cfg)
	for _, model := range []string{"a", "gone"} { // "gone" was served and unloaded
		for i := range 1100 {
			n.rates.hit(model, t0.Add(time.Duration(i)*10*time.Millisecond))
		}
		n.counters.of(model).success.add(time.Millisecond)
		n.windows.of(model)
		n.metrics.countRequest(model)
		n.metrics.e2e.WithLabelValues(model).Observe(0.001)
		n.metrics.failures.WithLabelValues(model, "timeout").Inc()
		n.metrics.abandoned.WithLabelValues(model).Inc()
		n.besideRatio.learn(besideKey{model, formJSON}, 100, 800)
		n.observeSummary(model, sumQueue, time.Millisecond)
	}
	n.stepRates.hit("gone", t0)
	n.unserved.set("gone", "the plan cannot place it")

	estimates, period := n.rates.closePeriod(t0.Add(11 * time.Second))
	require.Contains(t, estimates, "gone")
	require.False(t, n.keepPlan(estimates, period), "a gone model's rate, which the plan does not place, re-plans every period")

	n.forgetUnserved()
	for i := range 1100 { // a's load goes on
		n.rates.hit("a", t0.Add(11*time.Second+time.Duration(i)*10*time.Millisecond))
	}
	estimates, period = n.rates.closePeriod(t0.Add(22 * time.Second))
	require.Equal(t, []string{"a"}, keysOf(estimates))
	require.True(t, n.keepPlan(estimates, period), "the plan serves every model still served")
	require.Empty(t, n.stepRates.estimates(t0.Add(22*time.Second)))
	_, ok := n.counters.m.Load("gone")
	require.False(t, ok)
	_, ok = n.windows.m.Load("gone")
	require.False(t, ok)
	require.Empty(t, n.unserved.all())
	_, ok = n.counters.m.Load("a")
	require.True(t, ok)
	require.InDelta(t, unknownBesideRatio, n.besideRatio.ratio(besideKey{"gone", formJSON}), 1e-9, "what its requests held is forgotten")
	require.InDelta(t, 8, n.besideRatio.ratio(besideKey{"a", formJSON}), 1e-9)
	var summarized []string
	n.summaries().models.Range(func(name, _ any) bool { summarized = append(summarized, name.(string)); return true })
	require.Equal(t, []string{"a"}, summarized, "its Triton latency summaries are dropped")

	reg := prometheus.NewPedanticRegistry() // the per-model families alone: the node's collector needs its devices
	m := n.metrics
	reg.MustRegister(m.requests, m.failures, m.violations, m.e2e, m.queue, m.compute, m.hop, m.batch, m.cacheHits, m.cacheMisses, m.abandoned)
	families, err := reg.Gather()
	require.NoError(t, err)
	models := map[string][]string{} // family → its series' models
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "model" {
					models[f.GetName()] = append(models[f.GetName()], l.GetValue())
				}
			}
		}
	}
	require.Equal(t, map[string][]string{
		"gpuletd_requests_total": {"a"}, "gpuletd_request_failures_total": {"a"},
		"gpuletd_request_duration_seconds": {"a"}, "gpuletd_slo_violations_total": {"a"},
		"gpuletd_http_answers_abandoned_total": {"a"},
	}, models)
}

func keysOf(m map[string]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
