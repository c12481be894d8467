package daemon

import (
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/gpulet/gpuletd/daemon/config"
	"github.com/gpulet/gpuletd/daemon/repository"
	"github.com/gpulet/gpuletd/profiler/store"
)

// startupSelection is which model folders of the repository serve at start
// (startup_models, Triton's --load-model under explicit model control).
type startupSelection struct {
	// all serves every folder.
	all bool
	// families are the folders to serve: those named, and for a pipeline
	// its steps' folders and the folders of their variants.
	families map[string]bool
	// unknown are the names the repository holds no folder of, sorted.
	unknown []string
}

// selectStartup resolves names against the repository's index.
func selectStartup(ix *repository.Index, names []string) startupSelection {
	if slices.Contains(names, config.StartupAll) {
		return startupSelection{all: true}
	}
	byFamily := map[string][]*repository.Model{}
	for _, m := range ix.Models {
		byFamily[m.Family] = append(byFamily[m.Family], m)
	}
	sel := startupSelection{families: map[string]bool{}}
	var pick func(family string)
	pick = func(family string) {
		if sel.families[family] {
			return
		}
		sel.families[family] = true
		for _, m := range byFamily[family] {
			if m.Config.Ensemble == nil {
				continue
			}
			for _, s := range m.Config.Ensemble.Steps {
				pick(s.Model)
				for _, v := range ix.Models {
					if v.Config.VariantOf == s.Model {
						pick(v.Family)
					}
				}
			}
		}
	}
	for _, name := range names {
		_, broken := ix.Broken[name]
		if len(byFamily[name]) == 0 && !broken {
			sel.unknown = append(sel.unknown, name)
			continue
		}
		pick(name)
	}
	slices.Sort(sel.unknown)
	sel.unknown = slices.Compact(sel.unknown)
	return sel
}

// serves tells whether the folder family serves at start.
func (s startupSelection) serves(family string) bool { return s.all || s.families[family] }

// notLoaded lists the folders of ix that do not serve at start (broken
// ones included), sorted.
func (s startupSelection) notLoaded(ix *repository.Index) []string {
	if s.all {
		return nil
	}
	var out []string
	for _, m := range ix.Models {
		if !s.serves(m.Family) {
			out = append(out, m.Family)
		}
	}
	for name := range ix.Broken {
		if !s.serves(name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// noteStartup says what startup_models left out: names the repository has
// no folder of (a warning event each: a typo would otherwise leave a model
// unserved without a word), and the folders not loaded (the log); and which
// folders model_config_name picked a custom configuration of (the log), or
// that it picked none (a warning event).
func (n *node) noteStartup(sel startupSelection) {
	for _, name := range sel.unknown {
		n.events.add(EventModelInvalid, store.SeverityWarning,
			fmt.Sprintf("startup_models names %s, which the model repository (%s) has no folder of%s", name, n.catalog.roots, n.catalog.roots.DidYouMean(name)),
			map[string]string{"model": name})
	}
	if names := n.catalog.notLoadedNames(); len(names) > 0 {
		n.log.Info("model folders not loaded at start (startup_models): the repository API loads them", zap.Strings("models", names))
	}
	n.catalog.mu.RLock()
	ix := n.catalog.index
	n.catalog.mu.RUnlock()
	if ix == nil {
		return
	}
	switch note, warn := ix.ConfigNameNote(); {
	case warn: // a misspelt name would otherwise change nothing without a word
		n.events.add(EventModelInvalid, store.SeverityWarning, note, nil)
	case note != "":
		n.log.Info(note)
	}
}

// StartupPlan says what startup_models (names) would do with the repository
// ix: the folders not served at start, and the names ix has no folder of
// (both sorted); nil for both when every folder serves.
func StartupPlan(ix *repository.Index, names []string) (notLoaded, unknown []string) {
	sel := selectStartup(ix, names)
	return sel.notLoaded(ix), sel.unknown
}
