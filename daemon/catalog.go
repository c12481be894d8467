package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/internal/configerr"
	"github.com/gpulet/gpuletd/profiler/store"
	"go.uber.org/zap"
)

// catalog is the set of models the daemon serves: the repository entries
// that are loaded (all of them at start; the repository API loads and
// unloads them).
type catalog struct {
	roots  repository.Roots // the model repositories, in order
	opts   repository.Options
	st     *store.Store
	events *events
	log    *zap.Logger
	// requestLimit is limits.max_request_body now, for the warning on a
	// model whose requests cannot fit it; nil warns of nothing.
	requestLimit func() int64

	mu     sync.RWMutex
	models map[string]*repository.Model
	// pipelines are the served ensembles: they run the models' executors
	// and have none of their own, so they stay out of models (the planner,
	// the profiler and the store see models only).
	pipelines map[string]*repository.Model
	index     *repository.Index // last scan
	// uploaded maps a model folder loaded from file overrides (a load
	// request's files, not the repository) to the root that holds it.
	uploaded map[string]string
	// notLoaded are the repository's folders startup_models left out, until
	// a load asks for them: they are not served, and a broken one among
	// them is not reported as a model that cannot be served.
	notLoaded map[string]bool
	// unloaded are the models and pipelines the repository API unloaded,
	// with when (catalog_unloaded.go).
	unloaded map[string]time.Time
}

func newCatalog(roots []string, opts repository.Options, st *store.Store, ev *events, log *zap.Logger) *catalog {
	opts.Digests = repository.NewDigestCache() // the index and reloads read unchanged files once
	return &catalog{roots: roots, opts: opts, st: st, events: ev, log: log, models: map[string]*repository.Model{},
		pipelines: map[string]*repository.Model{}, uploaded: map[string]string{}, notLoaded: map[string]bool{}}
}

// scan reads the repository and serves its good models that startup (the
// startup_models setting) selects.
func (c *catalog) scan(ctx context.Context, startup []string) (startupSelection, error) {
	ix, err := repository.Scan(c.roots, c.opts)
	if err != nil {
		return startupSelection{}, err
	}
	sel := selectStartup(ix, startup)
	c.mu.Lock()
	c.index = ix
	for _, name := range sel.notLoaded(ix) {
		c.notLoaded[name] = true
	}
	c.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(ix.Broken)) {
		if sel.serves(name) {
			c.events.add(EventModelInvalid, store.SeverityWarning, "model repository entry skipped: "+ix.Broken[name].Error(), map[string]string{"model": name})
		}
	}
	for _, name := range ix.Names() {
		if m := ix.Models[name]; sel.serves(m.Family) {
			if err := c.add(ctx, m); err != nil {
				return sel, err
			}
		}
	}
	return sel, nil
}

// notLoadedNames lists the folders startup_models left out that nothing
// loaded since, sorted.
func (c *catalog) notLoadedNames() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Sorted(maps.Keys(c.notLoaded))
}

// isNotLoaded tells whether startup_models left the repository folder name
// out and nothing loaded it since.
func (c *catalog) isNotLoaded(name string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.notLoaded[name]
}

// add serves a model and records it in the store. A store that cannot be
// written does not keep the model from being served; watchStore records it
// once the store can be written again.
func (c *catalog) add(ctx context.Context, m *repository.Model) error {
	if c.requestLimit != nil {
		c.warnIfTooLarge(m, c.requestLimit())
	}
	if m.Config.Ensemble != nil {
		c.mu.Lock()
		c.pipelines[m.Name] = m
		c.mu.Unlock()
		var steps []string
		for _, s := range m.Config.Ensemble.Steps {
			steps = append(steps, s.StepKey())
		}
		c.log.Info("pipeline found", zap.String("pipeline", m.Name), zap.Strings("steps", steps),
			zap.Duration("slo", m.Config.SLO.D()), zap.String("fanout", m.Config.Ensemble.Fanout))
		for _, note := range m.Notes {
			c.log.Info("pipeline configuration", zap.String("pipeline", m.Name), zap.String("note", note))
		}
		return nil
	}
	if err := c.record(ctx, m); err != nil && !store.Unwritable(err) {
		return err
	}
	c.mu.Lock()
	c.models[m.Name] = m
	c.mu.Unlock()
	c.log.Info("model found", zap.String("model", m.Name), zap.Int("version", m.Version),
		zap.Duration("slo", m.Config.SLO.D()), zap.String("slo_from", m.SLOSource), zap.Int("max_batch_size", m.Config.MaxBatchSize),
		zap.Strings("config", m.ConfigFiles))
	for _, note := range m.Notes {
		c.log.Info("model configuration", zap.String("model", m.Name), zap.String("note", note))
	}
	return nil
}

// load reads one model from the repository (again) and serves every
// version its policy selects, dropping versions it no longer selects; a
// non-empty override (Triton's ModelConfig as JSON) replaces its
// configuration files. A non-empty root reads the folder from there instead
// of the repository (uploaded files; see uploads). check, unless nil, sees
// the versions read before they replace anything; its error fails the load
// as one of reading them does. It returns the newest, and the root of the
// uploaded folder it replaced, which the caller removes.
func (c *catalog) load(ctx context.Context, name string, override []byte, root string, check func([]*repository.Model) error) (m *repository.Model, replaced string, err error) {
	c.mu.Lock()
	delete(c.notLoaded, name) // asked for now: served, or said why not
	delete(c.unloaded, name)
	c.mu.Unlock()
	ms, err := c.read(name, override, root)
	if root == "" {
		c.noteBroken(name, err)
	}
	if err != nil {
		return nil, "", err
	}
	if check != nil {
		if err := check(ms); err != nil {
			if root == "" && len(override) == 0 {
				c.noteBroken(name, err) // the folder itself cannot serve
			}
			return nil, "", err
		}
	}
	keep := map[string]bool{}
	for _, m := range ms {
		if err := c.add(ctx, m); err != nil {
			return nil, "", err
		}
		keep[m.Name] = true
	}
	c.mu.Lock()
	replaced = c.dropUpload(name)
	if root != "" {
		c.uploaded[name] = root
	}
	for key, m := range c.models {
		if m.Family == name && !keep[key] {
			delete(c.models, key)
		}
	}
	if !keep[name] {
		delete(c.pipelines, name)
	} else if ms[0].Config.Ensemble != nil {
		delete(c.models, name) // a model folder turned into a pipeline
	}
	c.mu.Unlock()
	return ms[0], replaced, nil
}

// read reads the versions of the model folder name as load would, from
// the repository or from root ("" is the repository), with the
// configuration override (nil: none), and changes nothing.
func (c *catalog) read(name string, override []byte, root string) ([]*repository.Model, error) {
	opts := c.opts
	opts.Override = override
	roots := c.roots
	if root != "" {
		roots = repository.Roots{root}
	}
	return repository.LoadVersions(roots, name, opts)
}

// noteBroken keeps the repository entry name's state after reading it
// again with result err: broken with err (so that the model list, the
// status and the ready endpoint say why it does not serve, as for an entry
// broken at start), or no longer broken (read, or gone).
func (c *catalog) noteBroken(name string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index == nil {
		return
	}
	if err == nil || errors.Is(err, repository.ErrNotFound) {
		delete(c.index.Broken, name)
		return
	}
	c.index.Broken[name] = err
}

// serves tells whether the model folder family is loaded: a version of its
// model, or its pipeline.
func (c *catalog) serves(family string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if _, ok := c.pipelines[family]; ok {
		return true
	}
	for _, m := range c.models {
		if m.Family == family {
			return true
		}
	}
	return false
}

// unload stops serving a model: every version of a model folder, or the one
// version a VersionKey names. It returns the root of the folder's uploaded
// files, if it was loaded from them and no version is left, which the
// caller removes.
func (c *catalog) unload(name string) (uploaded string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pipelines[name]; ok {
		delete(c.pipelines, name)
		c.markUnloaded(name, name, time.Now())
		return c.dropUpload(name), nil
	}
	m, ok := c.models[name]
	if !ok {
		return "", fmt.Errorf("unload %s: %w", name, repository.ErrNotFound)
	}
	c.markUnloaded(name, m.Family, time.Now())
	for key, o := range c.models {
		if key == name || o.Family == name {
			delete(c.models, key)
		}
	}
	for _, o := range c.models {
		if o.Family == m.Family {
			return "", nil
		}
	}
	return c.dropUpload(m.Family), nil
}

// dropUpload forgets that family came from uploaded files and returns
// their root; c.mu is held.
func (c *catalog) dropUpload(family string) string {
	root := c.uploaded[family]
	delete(c.uploaded, family)
	return root
}

// versions lists the served versions of a model folder, ascending.
func (c *catalog) versions(family string) []int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []int
	for _, m := range c.models {
		if m.Family == family {
			out = append(out, m.Version)
		}
	}
	sort.Ints(out)
	return out
}

// get returns a served model.
func (c *catalog) get(name string) (*repository.Model, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	m, ok := c.models[name]
	return m, ok
}

// family lists the versions served of the model folder name, sorted by
// name.
func (c *catalog) family(name string) []*repository.Model {
	return slices.DeleteFunc(c.all(), func(m *repository.Model) bool { return m.Family != name })
}

// serving tells whether m is the load of its model served now: not
// unloaded, nor loaded again since.
func (c *catalog) serving(m *repository.Model) bool {
	cur, ok := c.get(m.Name)
	return ok && cur == m
}

// pipeline returns a served pipeline (an ensemble).
func (c *catalog) pipeline(name string) (*repository.Model, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.pipelines[name]
	return p, ok
}

// allPipelines returns the served pipelines, sorted by name.
func (c *catalog) allPipelines() []*repository.Model {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return byName(c.pipelines)
}

// steps checks a pipeline against the models served now and returns the
// models its steps run, in order. A step whose folder is broken says why
// it cannot be served, rather than to load it, as does one that pins a
// version its folder's version_policy does not serve.
func (c *catalog) steps(p *repository.Model) ([]*repository.Model, error) {
	if e := p.Config.Ensemble; e != nil {
		for _, s := range e.Steps {
			if _, ok := c.get(s.StepKey()); ok {
				continue
			}
			if err := c.broken(s.Model); err != nil {
				return nil, fmt.Errorf("check pipeline %s: %w: %s (%s) cannot be served: %w", p.Name, repository.ErrEnsemble, s.Place(), s.StepKey(), err)
			}
			if why := s.VersionNotServed(c.all()); why != "" {
				return nil, fmt.Errorf("check pipeline %s: %w: %s (%s): %s", p.Name, repository.ErrEnsemble, s.Place(), s.StepKey(), why)
			}
		}
	}
	return p.CheckEnsemble(func(name string) *repository.Model {
		m, _ := c.get(name)
		return m
	})
}

// all returns the served models, sorted by name.
func (c *catalog) all() []*repository.Model {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return byName(c.models)
}

// byName lists a map's models sorted by name.
func byName(ms map[string]*repository.Model) []*repository.Model {
	out := slices.Collect(maps.Values(ms))
	slices.SortFunc(out, func(a, b *repository.Model) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// indexEntries lists every repository entry with its state, and the models
// served from uploaded files in place of (or beside) the repository's, for
// the repository index API, by name and then version.
func (c *catalog) indexEntries(ctx context.Context) ([]repoEntry, error) {
	ix, err := repository.Scan(c.roots, c.opts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.index = ix
	var out []repoEntry
	for _, m := range c.models {
		if c.uploaded[m.Family] != "" {
			out = append(out, repoEntry{Name: m.Family, Version: fmt.Sprint(m.Version), State: "READY", version: m.Version})
		}
	}
	for _, name := range ix.Names() {
		m := ix.Models[name]
		if c.uploaded[m.Family] != "" {
			continue
		}
		state, reason := "UNAVAILABLE", ""
		_, model := c.models[name]
		_, pipe := c.pipelines[name]
		switch {
		case model || pipe:
			state = "READY"
		case c.notLoaded[m.Family]:
			reason = reasonNotLoaded
		case !c.unloaded[m.Family].IsZero():
			reason = unloadedReason(c.unloaded[m.Family])
		}
		out = append(out, repoEntry{Name: m.Family, Version: fmt.Sprint(m.Version), State: state, Reason: reason, version: m.Version})
	}
	for name, err := range ix.Broken {
		if c.uploaded[name] == "" {
			out = append(out, repoEntry{Name: name, State: "UNAVAILABLE", Reason: err.Error()})
		}
	}
	slices.SortFunc(out, func(a, b repoEntry) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.version, b.version))
	})
	_ = ctx
	return out, nil
}

// reasonNotLoaded is why a folder startup_models left out does not serve.
const reasonNotLoaded = "not loaded at start (startup_models); load it with the repository API"

// repoEntry is one row of POST /v2/repository/index.
type repoEntry struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	State   string `json:"state"`
	Reason  string `json:"reason,omitempty"`
	version int    // Version as a number, to sort by
}

var errNotServed = errors.New("model is not served")

// broken returns the error of the repository entry name when the last scan
// found it broken (and it is not served from an earlier, good version).
func (c *catalog) broken(name string) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if _, ok := c.models[name]; ok || c.index == nil {
		return nil
	}
	if _, ok := c.pipelines[name]; ok || c.notLoaded[name] {
		return nil
	}
	return c.index.Broken[name]
}

// didYouMean is " (did you mean X?)" when name is a likely misspelling of
// one name the repository holds (served, a pipeline, left out at start or
// broken), else "".
func (c *catalog) didYouMean(name string) string {
	c.mu.RLock()
	known := map[string]string{}
	for _, m := range c.models {
		known[m.Family] = m.Family
	}
	for p := range c.pipelines {
		known[p] = p
	}
	for n := range c.notLoaded {
		known[n] = n
	}
	if c.index != nil {
		for n := range c.index.Broken {
			known[n] = n
		}
	}
	c.mu.RUnlock()
	return configerr.DidYouMean(name, known)
}

// brokenNames lists the broken entries of the last scan, sorted.
func (c *catalog) brokenNames() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []string
	if c.index == nil {
		return nil
	}
	for name := range c.index.Broken {
		if _, ok := c.models[name]; !ok && !c.notLoaded[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// record writes a model's record to the store.
func (c *catalog) record(ctx context.Context, m *repository.Model) error {
	rec := store.ModelRecord{
		Name: m.Name, Version: m.Version, SHA256: m.SHA256, Path: m.File,
		SLOMS: float64(m.Config.SLO.D().Microseconds()) / 1000, MaxBatchSize: m.Config.MaxBatchSize,
		Platform: m.Platform,
	}
	if _, err := c.st.UpsertModel(ctx, rec); err != nil {
		return fmt.Errorf("record model %s: %w", m.Name, err)
	}
	return nil
}

// recordAll writes every served model's record to the store (after the
// store could not be written for a while).
func (c *catalog) recordAll(ctx context.Context) {
	c.mu.RLock()
	ms := make([]*repository.Model, 0, len(c.models))
	for _, m := range c.models {
		ms = append(ms, m)
	}
	c.mu.RUnlock()
	for _, m := range ms {
		if err := c.record(ctx, m); err != nil {
			c.log.Warn("record model", zap.Error(err))
		}
	}
}
