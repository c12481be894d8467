package daemon

import (
	"maps"
	"slices"
	"time"
)

// The catalog remembers the models unloaded through the repository API
// (gpuletd models unload, Triton's unload), and when, until a load reads
// them again or their folder leaves the repository: a folder that is there
// but not served then says why, as Triton's repository index does, in the
// model's endpoints, the index and the status.

// markUnloaded notes that the model or pipeline name, of the repository
// folder family, was unloaded at at; one loaded from uploaded files alone
// has no folder to load again, and is not noted. c.mu is held.
func (c *catalog) markUnloaded(name, family string, at time.Time) {
	if len(c.roots.Holders(family)) == 0 {
		return
	}
	if c.unloaded == nil {
		c.unloaded = map[string]time.Time{}
	}
	c.unloaded[name] = at
}

// forgetUnloaded drops the note of an unload of name: its folder left the
// repository.
func (c *catalog) forgetUnloaded(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.unloaded, name)
}

// unloadedAt says when name was unloaded, if it was and nothing loaded it
// since.
func (c *catalog) unloadedAt(name string) (time.Time, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	at, ok := c.unloaded[name]
	return at, ok
}

// unloadedNames lists the models and pipelines unloaded and not loaded
// since, sorted.
func (c *catalog) unloadedNames() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Sorted(maps.Keys(c.unloaded))
}

// unloadedReason is what a folder unloaded at at says of itself.
func unloadedReason(at time.Time) string {
	return "unloaded at " + at.Format(time.DateTime) + " through the repository API; load it with the repository API"
}
