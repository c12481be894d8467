package daemon

import (
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/executor/tensor"
)

// executeCached answers a request of a model or pipeline that enables the
// response cache from the cache when it holds the answer (no gpu-let runs
// it, and it leaves the planned rate), else runs it and keeps a successful
// answer — a pipeline's only when every step ran its own model, not a
// cheaper variant that accuracy scaling chose, so that a hit never answers
// below the pipeline's accuracy.
func (n *node) executeCached(m *repository.Model, inputs []tensor.Tensor, names []string, run func() (*executed, *inferError)) (*executed, *inferError) {
	hit, miss := n.lookUp(m, inputs, names)
	if hit != nil {
		n.rates.unhit(m.Name)
		return hit, nil
	}
	res, ierr := run()
	if ierr != nil {
		miss.done(nil)
	} else {
		miss.done(res)
	}
	return res, ierr
}

// cacheMiss is a request that the response cache did not hold, until it is
// answered.
type cacheMiss struct {
	n      *node
	m      *repository.Model
	key    cacheKey
	lookup time.Duration
}

// lookUp looks a request of m up in the response cache and returns the
// answer kept for it, booked as a hit, or the miss to finish with done.
// Hits and misses are timed as Triton's statistics time them: the look-up,
// and the look-up and the insertion.
func (n *node) lookUp(m *repository.Model, inputs []tensor.Tensor, names []string) (*executed, *cacheMiss) {
	start := time.Now()
	key := n.cache.key(m, inputs, names)
	if outs, emulated, ok := n.cache.get(key, m, n.catalog.serving); ok {
		n.counters.of(m.Name).cacheHit.add(time.Since(start))
		n.metrics.cacheHits.WithLabelValues(m.Name).Inc()
		return &executed{outs: outs, emulated: emulated, cached: true}, nil
	}
	n.metrics.cacheMisses.WithLabelValues(m.Name).Inc()
	return nil, &cacheMiss{n: n, m: m, key: key, lookup: time.Since(start)}
}

// done books the miss once its request was answered, keeping the answer
// res unless accuracy scaling degraded it; nil: nothing to keep (the
// request failed, or another model answered it).
func (c *cacheMiss) done(res *executed) {
	took := c.lookup
	if res != nil && !res.degraded {
		put := time.Now()
		c.n.cache.put(c.key, c.m, res.outs, res.emulated, res.ran)
		took += time.Since(put)
	}
	c.n.counters.of(c.m.Name).cacheMiss.add(took)
}
