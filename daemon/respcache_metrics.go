package daemon

import "github.com/prometheus/client_golang/prometheus"

// cacheCollector reports what the response cache holds at scrape time.
type cacheCollector struct{ n *node }

var (
	descCacheBytes     = prometheus.NewDesc("gpuletd_response_cache_bytes", "Bytes the response cache holds, answers and their bookkeeping.", nil, nil)
	descCacheBudget    = prometheus.NewDesc("gpuletd_response_cache_budget_bytes", "Bytes the response cache may hold (response_cache.size; 0: off).", nil, nil)
	descCacheEntries   = prometheus.NewDesc("gpuletd_response_cache_entries", "Answers the response cache holds.", nil, nil)
	descCacheEvictions = prometheus.NewDesc("gpuletd_response_cache_evictions_total", "Answers dropped from the response cache to stay within its budget.", nil, nil)
)

func (c cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCacheBytes, descCacheBudget, descCacheEntries, descCacheEvictions} {
		ch <- d
	}
}

func (c cacheCollector) Collect(ch chan<- prometheus.Metric) {
	if c.n.cache == nil {
		return
	}
	u := c.n.cache.usage()
	ch <- prometheus.MustNewConstMetric(descCacheBytes, prometheus.GaugeValue, float64(u.Bytes))
	ch <- prometheus.MustNewConstMetric(descCacheBudget, prometheus.GaugeValue, float64(u.Budget))
	ch <- prometheus.MustNewConstMetric(descCacheEntries, prometheus.GaugeValue, float64(u.Entries))
	ch <- prometheus.MustNewConstMetric(descCacheEvictions, prometheus.CounterValue, float64(u.Evictions))
}
