package repository

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulet/gpuletd/kserve/tritonpb"
)

// Pipelines: Triton's ensembles.
//
// A config.pbtxt with platform "ensemble" is a pipeline of models served
// under its own name and SLO: its ensemble_scheduling steps each read
// tensors the request gave or another step wrote (input_map: the step
// model's input → the pipeline's tensor) and write new ones (output_map:
// the step model's output → the pipeline's tensor). As in Triton, a step
// runs once what it reads is written, whatever the order the steps are
// written in: steps that read nothing of each other run at once (parallel
// branches), and the steps are kept in an order they can run in (the
// written order where it is one). The pipeline's outputs are tensors its
// steps write. gpuletd adds one parameter: fanout names a tensor a step
// writes whose rows, along its first dimension after the batch, each
// become a request of their own to the steps that read it and those after
// them (a detector's objects, each to the classifier); the pipeline's
// outputs written after the fan-out hold one row per such request, in
// order. A pipeline with a fan-out answers one request at a time: batch 1.

// PlatformEnsemble is a pipeline of models (Triton's ensemble platform).
const PlatformEnsemble = "ensemble"

// ParamFanout is the ensemble parameter naming the fan-out tensor.
const ParamFanout = "fanout"

// Ensemble is a pipeline's steps.
type Ensemble struct {
	// Steps are in an order they can run in: each after the steps whose
	// outputs it reads, those before the fan-out first, the step that
	// writes the fan-out as late among them as it can be.
	Steps []EnsembleStep
	// Fanout is the tensor whose rows become requests of their own ("" for
	// none); FanoutStep the first step that runs once per row (every step
	// from it on does), FanoutWriter the step that writes Fanout (-1 for
	// none).
	Fanout       string
	FanoutStep   int
	FanoutWriter int
	// Waits lists, by step, the steps that start only once it is through:
	// those that read what it writes (the fan-out's first steps wait on its
	// writer alone; the pipeline's deadlines are split along them:
	// pipeline.Plan.DeadlineSharesOf). nil without branches: each step
	// waits on the one before it.
	Waits [][]int
	// RowReads are the tensors given by the request or written before the
	// fan-out that steps from the fan-out on read: every row's request
	// gets each whole (an image beside each of its objects). RowNeeds are
	// the steps before the fan-out, but its writer, that write them: the
	// fan-out starts once they are through too.
	RowReads []string
	RowNeeds []int
	// Nested are the steps as written that run a pipeline of their own
	// (Triton's nested ensembles), by written place: Steps holds that
	// pipeline's steps in their place (inlineNested). Inlined names every
	// pipeline folder whose steps Steps holds, at any depth, sorted.
	Nested  map[int]EnsembleStep
	Inlined []string
}

// Branches reports whether some step may run beside the step before it
// (EnsembleStep.Beside); without branches the steps run one after the
// other.
func (e *Ensemble) Branches() bool {
	return slices.ContainsFunc(e.Steps, func(s EnsembleStep) bool { return s.Beside })
}

// EnsembleStep is one model of a pipeline.
type EnsembleStep struct {
	// Model is the model's folder name; Version the version to run (0: the
	// one served under the folder's name).
	Model   string
	Version int
	// Inputs maps each input of the model to the pipeline tensor it reads,
	// Outputs each output of the model it uses to the pipeline tensor it
	// writes.
	Inputs, Outputs map[string]string
	// At is the step's place in ensemble_scheduling as written; Needs the
	// places in Steps of the steps that write what it reads; Beside whether
	// it may run beside the step before it in Steps: both before the
	// fan-out, or both after it, and neither reading what the other
	// writes, directly or through other steps.
	At     int
	Needs  []int
	Beside bool
	// Within is, for a step of a pipeline that is itself the step At of
	// this one (Triton's nested ensembles, inlined: inlineNested), its
	// written place in that pipeline, outermost first ([0]; [2 0] two
	// pipelines deep); nil for this pipeline's own steps.
	Within []int
}

// Place is where the step is written: "step[1]", or "step[1].step[0]" for
// the first step of the pipeline written as step[1].
func (s EnsembleStep) Place() string {
	var b strings.Builder
	fmt.Fprintf(&b, "step[%d]", s.At)
	for _, w := range s.Within {
		fmt.Fprintf(&b, ".step[%d]", w)
	}
	return b.String()
}

// StepKey is the catalog name of the step's model.
func (s EnsembleStep) StepKey() string {
	if s.Version > 0 {
		return VersionKey(s.Model, s.Version)
	}
	return s.Model
}

// tritonEnsemble reads ensemble_scheduling and checks its steps over the
// pipeline's tensors (each read tensor given by the request or written by
// a step, each written tensor written once, no step reading what it
// writes through others, every output written), puts them in an order they
// can run in (orderSteps) and checks that the fan-out, if any, is a tensor
// a step writes and other steps read, and that the steps that run once per
// row read only it and what such steps write.
func tritonEnsemble(pc *tritonpb.ModelConfig, c *ModelConfig, fanout string, bad func(string, ...any)) *Ensemble {
	es := pc.GetEnsembleScheduling()
	if es == nil || len(es.Step) == 0 {
		bad(`platform: "ensemble" needs ensemble_scheduling with at least one step`)
		return nil
	}
	have := map[string]string{} // tensor → who gives it
	for _, in := range c.Inputs {
		have[in.Name] = "the request"
	}
	steps := make([]EnsembleStep, len(es.Step))
	for i, st := range es.Step {
		f := fmt.Sprintf("ensemble_scheduling.step[%d]", i)
		s := EnsembleStep{Model: st.ModelName, Inputs: map[string]string{}, Outputs: map[string]string{}, At: i}
		switch {
		case !validName.MatchString(st.ModelName):
			bad("%s.model_name: %q is not a model name", f, st.ModelName)
		case st.ModelNamespace != "":
			bad("%s.model_namespace: namespaces are not served; name the model folder", f)
		}
		switch {
		case st.ModelVersion > 0:
			s.Version = int(st.ModelVersion)
		case st.ModelVersion < -1:
			bad("%s.model_version: %d; give a version folder's number, or -1 for the one served", f, st.ModelVersion)
		}
		if len(st.InputMap) == 0 {
			bad("%s.input_map: empty; map every input of %s to a tensor of the pipeline", f, st.ModelName)
		}
		for k, v := range st.InputMap {
			s.Inputs[k] = v
		}
		if len(st.OutputMap) == 0 {
			bad("%s.output_map: empty; map the outputs of %s the pipeline uses", f, st.ModelName)
		}
		for _, k := range sortedKeys(st.OutputMap) {
			v := st.OutputMap[k]
			if by, ok := have[v]; ok {
				bad("%s.output_map[%q]: %q is already given by %s; every tensor of the pipeline has one writer", f, k, v, by)
			} else {
				have[v] = fmt.Sprintf("step[%d]", i)
			}
			s.Outputs[k] = v
		}
		steps[i] = s
	}
	for _, s := range steps {
		for _, k := range sortedKeys(s.Inputs) {
			if _, ok := have[s.Inputs[k]]; !ok {
				bad("ensemble_scheduling.step[%d].input_map[%q]: %q is neither an input of the pipeline nor written by any step", s.At, k, s.Inputs[k])
			}
		}
	}
	for i, out := range c.Outputs {
		if _, ok := have[out.Name]; !ok {
			bad("output[%d]: %q is written by no step's output_map", i, out.Name)
		}
	}
	if fanout != "" {
		f := fmt.Sprintf("parameters[%q]", ParamFanout)
		reads := slices.ContainsFunc(steps, func(s EnsembleStep) bool { return slices.Contains(slices.Collect(maps.Values(s.Inputs)), fanout) })
		switch by, ok := have[fanout]; {
		case !ok:
			bad("%s: %q is no tensor of the pipeline", f, fanout)
		case by == "the request":
			bad("%s: %q is an input of the pipeline; the fan-out is a tensor a step writes", f, fanout)
		case !reads:
			bad("%s: %q is read by no step; the steps after the fan-out read it", f, fanout)
		}
		if c.MaxBatchSize > 1 {
			bad("max_batch_size: %d; a pipeline with a fan-out answers one request at a time: 0 or 1", c.MaxBatchSize)
		}
	}
	return orderSteps(steps, fanout, bad)
}

// TritonScheduling is e as a config.pbtxt's ensemble_scheduling: the steps
// in the order they were written, each model's version (-1: the one
// served) and maps.
func (e *Ensemble) TritonScheduling() *tritonpb.ModelEnsembling {
	written := 0
	for _, s := range e.Steps {
		written = max(written, s.At+1)
	}
	steps := make([]*tritonpb.ModelEnsembling_Step, written)
	for _, s := range e.Steps {
		if len(s.Within) > 0 {
			s = e.Nested[s.At] // a nested pipeline's step: the step as written
		}
		v := int64(-1)
		if s.Version > 0 {
			v = int64(s.Version)
		}
		steps[s.At] = &tritonpb.ModelEnsembling_Step{ModelName: s.Model, ModelVersion: v, InputMap: maps.Clone(s.Inputs), OutputMap: maps.Clone(s.Outputs)}
	}
	return &tritonpb.ModelEnsembling{Step: steps}
}

// VersionNotServed says why step s's pinned version is not among served,
// the models served now, when others of its folder are: "version 1 of
// labeler is not one its version_policy serves (it serves 2)"; "" when
// the step pins no version or its folder serves none (not loaded, or
// broken: said elsewhere).
func (s EnsembleStep) VersionNotServed(served []*Model) string {
	if s.Version == 0 {
		return ""
	}
	var versions []int
	for _, m := range served {
		if m.Family == s.Model && m.Config.Ensemble == nil {
			versions = append(versions, m.Version)
		}
	}
	if len(versions) == 0 {
		return ""
	}
	slices.Sort(versions)
	names := make([]string, 0, len(versions))
	for _, v := range slices.Compact(versions) {
		names = append(names, strconv.Itoa(v))
	}
	return fmt.Sprintf("version %d of %s is not one its version_policy serves (it serves %s); give the step model_version -1 for the newest, or serve that version too",
		s.Version, s.Model, strings.Join(names, ", "))
}

// ErrEnsemble wraps the problems of a pipeline with the models it runs.
var ErrEnsemble = errors.New("pipeline cannot run")

// CheckEnsemble checks a pipeline against the models its steps run, as
// get returns them by catalog name (nil: not served): every step's model
// served, every input of it mapped and every mapped name one of its inputs
// or outputs, and every tensor read as its writer gives it (data type). It
// returns the step models in step order.
func (m *Model) CheckEnsemble(get func(name string) *Model) ([]*Model, error) {
	e := m.Config.Ensemble
	if e == nil {
		return nil, fmt.Errorf("check pipeline %s: %w: not a pipeline", m.Name, ErrEnsemble)
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	types := map[string]string{}
	for _, in := range m.Inputs {
		types[in.Name] = string(in.DataType)
	}
	out := make([]*Model, len(e.Steps))
	for i, s := range e.Steps {
		f := fmt.Sprintf("%s (%s)", s.Place(), s.StepKey())
		sm := get(s.StepKey())
		switch {
		case sm == nil:
			bad("%s: the model is not served; load it first", f)
			continue
		case sm.Config.Ensemble != nil:
			bad("%s: a pipeline; the steps of a pipeline are models", f)
			continue
		case sm.Config.Sequence != nil && e.FanoutStep >= 0 && i >= e.FanoutStep:
			bad("%s: a stateful model (sequence_batching) runs here once for each row of the fan-out; a request of a sequence is one row, so put it before the fan-out", f)
			continue
		}
		out[i] = sm
		for _, in := range RequestTensors(sm.Inputs) {
			v, ok := s.Inputs[in.Name]
			if !ok {
				bad("%s: input %q of the model is not in input_map", f, in.Name)
				continue
			}
			if t, ok := types[v]; ok && t != string(in.DataType) {
				bad("%s: input %q is %s but %q is %s", f, in.Name, in.DataType, v, t)
			}
		}
		for k := range s.Inputs {
			if role := sm.Config.Sequence.Role(k, true); role != "" {
				bad("%s: input_map names %q, the model's sequence %s, which gpuletd fills; leave it out", f, k, role)
			} else if !slices.ContainsFunc(sm.Inputs, func(t TensorSpec) bool { return t.Name == k }) {
				bad("%s: input_map names %q, which the model has not (inputs: %s)", f, k, specNames(RequestTensors(sm.Inputs)))
			}
		}
		for k, v := range s.Outputs {
			if sm.Config.Sequence.Role(k, false) != "" {
				bad("%s: output_map names %q, the model's sequence state, which gpuletd keeps for the sequence's next request; leave it out", f, k)
				continue
			}
			i := slices.IndexFunc(sm.Outputs, func(t TensorSpec) bool { return t.Name == k })
			if i < 0 {
				bad("%s: output_map names %q, which the model has not (outputs: %s)", f, k, specNames(sm.Outputs))
				continue
			}
			types[v] = string(sm.Outputs[i].DataType)
		}
	}
	for _, o := range m.Outputs {
		if t, ok := types[o.Name]; ok && t != string(o.DataType) {
			bad("output %q is declared %s but its step writes %s", o.Name, o.DataType, t)
		}
	}
	if len(errs) == 0 {
		m.checkShapes(out, bad)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("check pipeline %s: %w: %w", m.Name, ErrEnsemble, errors.Join(errs...))
	}
	return out, nil
}

func specNames(ts []TensorSpec) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return fmt.Sprint(names)
}

// FitsStep reports whether m can run step s in place of the step's own
// model step: m has the same inputs as step, of the same data types, every
// output s maps, of the same data type, and batches if step does.
//
// A stateful model has no variant, and is none: its sequences' state is its
// own.
func (m *Model) FitsStep(s EnsembleStep, step *Model) bool {
	if m.Config.Ensemble != nil || m.Config.Sequence != nil || step.Config.Sequence != nil || len(m.Inputs) != len(step.Inputs) ||
		(m.Config.MaxBatchSize > 0) != (step.Config.MaxBatchSize > 0) {
		return false
	}
	same := func(have []TensorSpec, want TensorSpec) bool {
		return slices.ContainsFunc(have, func(t TensorSpec) bool { return t.Name == want.Name && t.DataType == want.DataType })
	}
	for _, in := range step.Inputs {
		if !same(m.Inputs, in) {
			return false
		}
	}
	for k := range s.Outputs {
		i := slices.IndexFunc(step.Outputs, func(t TensorSpec) bool { return t.Name == k })
		if i < 0 || !same(m.Outputs, step.Outputs[i]) {
			return false
		}
	}
	return true
}
