package daemon

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// forgetUnserved drops what the node keeps of each model and pipeline it
// no longer serves (unloaded, gone from the repository, a version its
// policy retired): its rate estimates, its statistics and latency window,
// why it was not served, what its requests hold beside their bodies, and
// its series in /metrics (its Triton latency summaries too), as Triton
// drops an unloaded model's, and its crash suspects and quarantined
// requests.
//
// A rate kept for a model that is gone held every later period's plan as
// not serving it (its estimate never falls below control.MinPlanRate, and
// the plan assigns it nothing), so the node re-planned every period while
// any other model had traffic. A request that was in flight at the unload
// may count the model again; the next period forgets it again.
func (n *node) forgetUnserved() {
	served := map[string]bool{}
	for _, m := range append(n.catalog.all(), n.catalog.allPipelines()...) {
		served[m.Name] = true
	}
	keep := func(name string) bool { return served[name] }
	for _, r := range []*rateMeter{n.rates, n.stepRates} {
		if r != nil {
			r.retain(keep)
		}
	}
	for _, m := range []*sync.Map{&n.counters.m, &n.windows.m} {
		m.Range(func(name, _ any) bool {
			if !keep(name.(string)) {
				m.Delete(name)
			}
			return true
		})
	}
	for name := range n.unserved.all() {
		if !keep(name) {
			n.unserved.clear(name)
		}
	}
	n.besideRatio.retain(keep)
	n.crashes.retain(keep)
	if s := n.tritonSums.Load(); s != nil {
		s.models.Range(func(name, _ any) bool {
			if !keep(name.(string)) {
				s.models.Delete(name)
			}
			return true
		})
	}
	if n.metrics != nil {
		n.metrics.retain(keep)
	}
}

// retain deletes the series of the per-model families whose model keep
// refuses.
func (m *metrics) retain(keep func(model string) bool) {
	for _, v := range []*prometheus.MetricVec{m.requests.MetricVec, m.failures.MetricVec, m.violations.MetricVec,
		m.e2e.MetricVec, m.queue.MetricVec, m.compute.MetricVec, m.hop.MetricVec, m.batch.MetricVec,
		m.cacheHits.MetricVec, m.cacheMisses.MetricVec, m.abandoned.MetricVec, m.grpcAbandoned.MetricVec} {
		for _, model := range modelLabels(v) {
			if !keep(model) {
				v.DeletePartialMatch(prometheus.Labels{"model": model})
			}
		}
	}
}

// modelLabels lists the values of the model label among a family's series.
func modelLabels(v *prometheus.MetricVec) []string {
	ch := make(chan prometheus.Metric)
	go func() {
		v.Collect(ch)
		close(ch)
	}()
	seen := map[string]bool{}
	var out []string
	for metric := range ch {
		var d dto.Metric
		if metric.Write(&d) != nil {
			continue
		}
		for _, l := range d.GetLabel() {
			if l.GetName() == "model" && !seen[l.GetValue()] {
				seen[l.GetValue()] = true
				out = append(out, l.GetValue())
			}
		}
	}
	return out
}
