package daemon

import (
	"context"
	"fmt"
	"slices"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/profiler/store"
)

// pipelinesNesting lists the served pipelines read from the repository
// that run the steps of the pipeline folder name: those that inlined its
// steps when they were read (Ensemble.Inlined), and those with a step of
// its folder read before it was a pipeline. A pipeline loaded with a
// configuration or files of its own is left as it was given.
func (c *catalog) pipelinesNesting(name string) []*repository.Model {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []*repository.Model
	for _, p := range byName(c.pipelines) {
		e := p.Config.Ensemble
		if p.Family == name || c.uploaded[p.Family] != "" || slices.Contains(p.ConfigFiles, repository.OverrideSource) {
			continue
		}
		if slices.Contains(e.Inlined, name) || slices.ContainsFunc(e.Steps, func(s repository.EnsembleStep) bool { return s.Model == name }) {
			out = append(out, p)
		}
	}
	return out
}

// loadNesting loads again the served pipelines that run the steps of the
// pipeline inner, just loaded, so that they run its steps as it has them
// now, as Triton loads an ensemble again when a model it runs is.
func (n *node) loadNesting(ctx context.Context, inner *repository.Model) {
	if inner.Config.Ensemble == nil {
		return
	}
	for _, p := range n.catalog.pipelinesNesting(inner.Family) {
		if ctx.Err() != nil {
			return
		}
		n.events.add(EventModelLoad, store.SeverityInfo, fmt.Sprintf("%s runs the steps of the pipeline %s, loaded anew: loading it again", p.Name, inner.Family),
			map[string]string{"model": p.Name})
		n.loadModel(ctx, p.Name, loadRequest{}) // a failure is its own event (loadFailed)
	}
}
