package repository

import (
	"fmt"
	"slices"
	"strings"
)

// Variants lists the models of all that may run step s of a pipeline whose
// step model is m: m, then every model that declares itself a variant of
// m's folder and fits the step's maps, in all's order.
func (s EnsembleStep) Variants(m *Model, all []*Model) []*Model {
	out := []*Model{m}
	for _, o := range all {
		if o.Name != m.Name && o.Config.VariantOf == m.Family && o.FitsStep(s, m) {
			out = append(out, o)
		}
	}
	return out
}

// PathsNotRun says which paths of pipeline m's path_accuracy table no
// request can run, steps being its step models in step order and all the
// models that may stand in for them (EnsembleStep.Variants): a path that
// names, for a step, a model that is neither the step's model nor a
// variant of it. Such an entry is never read (a misspelt name, or a
// variant not served), and the requests that run the path it meant are
// scored by the product of their models' accuracies instead.
func (m *Model) PathsNotRun(steps []*Model, all []*Model) []string {
	e := m.Config.Ensemble
	if e == nil || len(m.Config.PathAccuracy) == 0 || len(steps) != len(e.Steps) {
		return nil
	}
	var out []string
	for _, path := range sortedKeys(m.Config.PathAccuracy) {
		names := strings.Split(path, "/")
		if len(names) != len(steps) {
			continue // refused when the configuration was read
		}
		for i, name := range names {
			vs := e.Steps[i].Variants(steps[i], all)
			if slices.ContainsFunc(vs, func(v *Model) bool { return v.Name == name }) {
				continue
			}
			var can []string
			for _, v := range vs {
				can = append(can, v.Name)
			}
			out = append(out, fmt.Sprintf("parameters[%q]: path %q is never run: %s (%s) runs %s, not %q", ParamPathAccuracy, path, e.Steps[i].Place(), steps[i].Name, strings.Join(can, " or "), name))
			break
		}
	}
	return out
}
