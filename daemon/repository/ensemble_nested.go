package repository

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Nested pipelines: Triton's ensembles whose steps are ensembles.
//
// A step whose model folder holds a pipeline runs that pipeline's steps in
// its place. When a pipeline is read, such steps are inlined: each step of
// the inner pipeline becomes a step of the outer one reading and writing
// the outer pipeline's tensors where the step's input_map and output_map
// name them, and tensors of its own (named after the step's place) for
// what the inner pipeline keeps inside. The daemon then serves, plans and
// checks one flat pipeline of models, as it does any other; only the
// configuration read back (TritonScheduling) and the places in messages
// ("step[1].step[0]") still show the nesting. The inner pipeline's own SLO
// and accuracy parameters take no effect there: the outer pipeline's
// split over all its steps.

// maxNesting bounds how deep pipelines nest (a pipeline running a
// pipeline's steps is 1).
const maxNesting = 8

// nestedPipeline reads the configuration of the model folder name of the
// repositories from its files (o: how, without a load request's override) and
// returns it if it is a pipeline, with its own nested pipelines inlined
// (chain: the pipelines being inlined, outermost first, to refuse a
// cycle). A folder that is not a pipeline, or cannot be read (or found in
// one repository), gives nil and no error: the step is a model's, and the
// daemon says why it cannot be served where it cannot.
func nestedPipeline(roots Roots, name string, o Options, chain []string) (*Model, error) {
	if !validName.MatchString(name) {
		return nil, nil
	}
	root, err := roots.Locate(name)
	if err != nil {
		return nil, nil
	}
	inner, err := readConfig(filepath.Join(root, name), name, o)
	if err != nil || inner.Config.Ensemble == nil {
		return nil, nil
	}
	if i := slices.Index(chain, name); i >= 0 {
		return nil, &nestingError{fmt.Sprintf("pipelines run each other's steps without end: %s", strings.Join(append(slices.Clone(chain[i:]), name), " runs "))}
	}
	if len(chain) > maxNesting {
		return nil, &nestingError{fmt.Sprintf("pipelines nested %d deep (%s runs %s); at most %d", len(chain), strings.Join(chain, " runs "), name, maxNesting)}
	}
	if err := inner.inlineNested(roots, o, chain); err != nil {
		return nil, err
	}
	return inner, nil
}

// nestingError is a problem of the pipelines a pipeline's steps run,
// taken together (a cycle, too deep), which names them all.
type nestingError struct{ msg string }

func (e *nestingError) Error() string { return e.msg }

// inlineNested replaces each step of pipeline m whose model folder in the
// repositories is a pipeline by that pipeline's steps (see above), orders the
// steps again and notes which steps were pipelines. chain holds the
// pipelines m is inlined into, outermost first. The inner pipelines are
// read from their folders' files whatever configuration m came from.
func (m *Model) inlineNested(roots Roots, o Options, chain []string) error {
	o = Options{DefaultSLO: o.DefaultSLO, ConfigName: o.ConfigName}
	e := m.Config.Ensemble
	chain = append(slices.Clone(chain), m.Family)
	written := slices.Clone(e.Steps)
	slices.SortFunc(written, func(a, b EnsembleStep) int { return cmp.Compare(a.At, b.At) })
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	var flat []EnsembleStep
	nested := map[int]EnsembleStep{}
	var inlined, notes []string
	fanout, fanAt := e.Fanout, -1 // the pipeline's fan-out; fanAt the step whose pipeline has it
	for _, s := range written {
		inner, err := nestedPipeline(roots, s.Model, o, chain)
		var whole *nestingError
		switch {
		case err == nil:
		case errors.As(err, &whole) && len(chain) > 1:
			return err // the whole chain says it; the outermost step names its start
		default:
			return fmt.Errorf("ensemble_scheduling.step[%d] (%s): %w", s.At, s.Model, err)
		}
		if inner == nil {
			s.Needs, s.Beside = nil, false
			flat = append(flat, s)
			continue
		}
		steps, innerFan, ok := s.inline(inner, bad)
		if !ok {
			continue
		}
		if innerFan != "" {
			f := fmt.Sprintf("ensemble_scheduling.step[%d]", s.At)
			switch {
			case fanout != "":
				bad("%s: %s is a pipeline with a fan-out (%q), and this pipeline has one (%q); a pipeline has at most one", f, inner.Family, inner.Config.Ensemble.Fanout, fanout)
			case m.Config.MaxBatchSize > 1:
				bad("max_batch_size: %d; %s runs the pipeline %s, whose fan-out answers one request at a time: 0 or 1", m.Config.MaxBatchSize, f, inner.Family)
			}
			fanout, fanAt = innerFan, s.At
		}
		flat = append(flat, steps...)
		nested[s.At] = s
		inlined = append(append(inlined, inner.Family), inner.Config.Ensemble.Inlined...)
		run := fmt.Sprintf("its %d steps run", len(steps))
		if len(steps) == 1 {
			run = "its step runs"
		}
		notes = append(notes, fmt.Sprintf("ensemble_scheduling.step[%d] runs the pipeline %s: %s in its place, as steps of %s; its own slo and accuracy parameters take no effect here",
			s.At, inner.Family, run, m.Family))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if len(nested) == 0 {
		return nil
	}
	flat = slices.Clip(flat)
	ne := orderSteps(flat, fanout, bad)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if fanAt >= 0 {
		// The rows of a nested pipeline's fan-out run its steps alone: a
		// step of this pipeline reading what they write would run once
		// per row, where it reads their answer joined.
		for _, s := range ne.Steps[ne.FanoutStep:] {
			if s.At != fanAt {
				bad("ensemble_scheduling.step[%d] (%s) reads what the rows of the fan-out of the pipeline step[%d] runs (%s) write; only the answer may read them",
					s.At, s.Model, fanAt, nested[fanAt].Model)
			}
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
	}
	ne.Nested = nested
	ne.Inlined = slices.Compact(slices.Sorted(slices.Values(inlined)))
	m.Config.Ensemble = ne
	m.Notes = append(m.Notes, notes...)
	if m.Config.PathAccuracy != nil {
		// Its paths name a model a step as written; the steps run are others.
		m.Config.PathAccuracy = nil
		m.Notes = append(m.Notes, fmt.Sprintf("parameters[%q] ignored: a step runs a pipeline, so a path names no model of it; the models' accuracy parameters give the pipeline's", ParamPathAccuracy))
	}
	return nil
}

// inline returns the steps of pipeline inner, in the order written, as
// steps of the pipeline whose step s runs it: reading and writing that
// pipeline's tensors as s maps inner's inputs and outputs, and tensors of
// their own named after s's place for what inner keeps inside; and inner's
// fan-out so named ("" for none). It checks that s maps every input of
// inner and names only inner's inputs and outputs, and pins no version
// but 1.
func (s EnsembleStep) inline(inner *Model, bad func(string, ...any)) ([]EnsembleStep, string, bool) {
	f := fmt.Sprintf("ensemble_scheduling.step[%d]", s.At)
	ie := inner.Config.Ensemble
	ok := true
	fail := func(format string, args ...any) { bad(format, args...); ok = false }
	if s.Version > 1 {
		fail("%s.model_version: %d; %s is a pipeline, served as version 1 alone", f, s.Version, inner.Family)
	}
	has := func(ts []TensorSpec, name string) bool {
		return slices.ContainsFunc(ts, func(t TensorSpec) bool { return t.Name == name })
	}
	for _, in := range inner.Config.Inputs {
		if _, mapped := s.Inputs[in.Name]; !mapped {
			fail("%s.input_map: input %q of the pipeline %s is not mapped", f, in.Name, inner.Family)
		}
	}
	for _, k := range sortedKeys(s.Inputs) {
		if !has(inner.Config.Inputs, k) {
			fail("%s.input_map names %q, which the pipeline %s has not (inputs: %s)", f, k, inner.Family, specNames(inner.Config.Inputs))
		}
	}
	for _, k := range sortedKeys(s.Outputs) {
		if !has(inner.Config.Outputs, k) {
			fail("%s.output_map names %q, which the pipeline %s has not (outputs: %s)", f, k, inner.Family, specNames(inner.Config.Outputs))
		}
	}
	if !ok {
		return nil, "", false
	}
	rename := func(t string) string {
		if v, ok := s.Inputs[t]; ok {
			return v
		}
		if v, ok := s.Outputs[t]; ok {
			return v
		}
		return s.Place() + "." + t
	}
	steps := slices.Clone(ie.Steps)
	slices.SortFunc(steps, func(a, b EnsembleStep) int {
		return slices.Compare(append([]int{a.At}, a.Within...), append([]int{b.At}, b.Within...))
	})
	for i, is := range steps {
		ns := EnsembleStep{Model: is.Model, Version: is.Version, Inputs: map[string]string{}, Outputs: map[string]string{},
			At: s.At, Within: append([]int{is.At}, is.Within...)}
		for k, v := range is.Inputs {
			ns.Inputs[k] = rename(v)
		}
		for k, v := range is.Outputs {
			ns.Outputs[k] = rename(v)
		}
		steps[i] = ns
	}
	fanout := ""
	if ie.Fanout != "" {
		fanout = rename(ie.Fanout)
	}
	return steps, fanout, true
}

// configSource names where a pipeline's steps were read: its config.pbtxt
// (or the custom configuration that stood for it), or the configuration a
// load request gave.
func (m *Model) configSource() string {
	if slices.Contains(m.ConfigFiles, OverrideSource) {
		return OverrideSource + " of " + m.Family
	}
	return filepath.Join(m.Dir, m.tritonConfigFile())
}
