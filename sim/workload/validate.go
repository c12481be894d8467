package workload

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/executor/sched"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/pipeline"
	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/sim/arrival"
)

// ErrInvalid is wrapped by every FieldError.
var ErrInvalid = errors.New("invalid workload")

// FieldError is one invalid value: the field's path (models[2].rate), the
// value as written and what is allowed.
type FieldError struct {
	Field   string
	Value   any
	Allowed string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %v: %s", e.Field, e.Value, e.Allowed)
}

// Unwrap makes every FieldError match ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Partitionings allowed in Device.Partitioning.
var Partitionings = []string{string(gpulet.BackendMPS), string(gpulet.BackendMIG), string(gpulet.BackendNone)}

// Validate checks every field and returns all problems joined (each a
// *FieldError), nil when there are none. It does not look profile sets up;
// Input does.
func (w *Workload) Validate() error {
	var errs []error
	bad := func(field string, value any, allowed string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Value: value, Allowed: fmt.Sprintf(allowed, args...)})
	}
	errs = append(errs, w.validateSets()...)
	if len(w.Devices) == 0 {
		bad("devices", "[]", "at least one device group")
	}
	for i, d := range w.Devices {
		f := fmt.Sprintf("devices[%d]", i)
		if strings.TrimSpace(d.Profiles) == "" {
			bad(f+".profiles", `""`, "a reference profile set or device type")
		}
		if d.Count < 0 {
			bad(f+".count", d.Count, "a count ≥ 1 (0 or absent means 1)")
		}
		if d.Partitioning != "" && !slices.Contains(Partitionings, d.Partitioning) {
			bad(f+".partitioning", d.Partitioning, "one of %s", strings.Join(Partitionings, ", "))
		}
		seen := map[int]bool{}
		for j, s := range d.Sizes {
			if s < 1 || s > 100 {
				bad(fmt.Sprintf("%s.sizes[%d]", f, j), s, "a percentage in 1..100")
			}
			if seen[s] {
				bad(fmt.Sprintf("%s.sizes[%d]", f, j), s, "each size once")
			}
			seen[s] = true
		}
		if d.Partitioning == string(gpulet.BackendNone) && len(d.Sizes) > 0 && !slices.Equal(d.Sizes, []int{100}) {
			bad(f+".sizes", d.Sizes, "[100] or nothing when partitioning is none")
		}
		if d.MaxGPULets < 0 {
			bad(f+".max_gpulets", d.MaxGPULets, "a count ≥ 1 (0 or absent means %d)", gpulet.DefaultMaxGPULets)
		}
		if d.MIG != "" && d.Partitioning != string(gpulet.BackendMIG) {
			bad(f+".mig", d.MIG, "only with partitioning: mig")
		}
		if !finiteNonNeg(d.MemoryMB) {
			bad(f+".memory_mb", d.MemoryMB, "a finite number of MB ≥ 0 (0 means the GPU's)")
		}
	}
	switch {
	case len(w.Models) == 0 && len(w.Pipelines) == 0:
		bad("models", "[]", "at least one model (or pipeline)")
	case len(w.Models) > 0 && len(w.Pipelines) > 0:
		bad("pipelines", len(w.Pipelines), "no pipelines beside models: a workload serves one or the other")
	case len(w.Pipelines) > 1:
		bad("pipelines", len(w.Pipelines), "one pipeline: the pipeline planner takes every GPU of the node")
	}
	names := map[string]bool{}
	for i, p := range w.Pipelines {
		f := fmt.Sprintf("pipelines[%d]", i)
		if !slices.Contains(pipeline.Builtins(), p.Builtin) {
			bad(f+".builtin", p.Builtin, "one of %s", strings.Join(pipeline.Builtins(), ", "))
		}
		if names[p.PipelineName()] {
			bad(f+".name", p.PipelineName(), "a name not used by another pipeline")
		}
		names[p.PipelineName()] = true
		if !finiteNonNeg(p.Rate) {
			bad(f+".rate", p.Rate, "a finite number of requests/s ≥ 0")
		}
		if p.Arrival != "" {
			if _, err := arrival.Parse(p.Arrival); err != nil {
				bad(f+".arrival", p.Arrival, "poisson, constant, gamma:<shape>, gamma:cv=<c>, trace:<file>, trace:<file>@<rate scale> or intervals:<file>")
			}
		}
		if !(p.MinAccuracy >= 0 && p.MinAccuracy <= 1) {
			bad(f+".min_accuracy", p.MinAccuracy, "a share of the full accuracy in [0, 1]")
		}
		if p.Scaling != "" && !slices.Contains(pipelineScalings, p.Scaling) {
			bad(f+".scaling", p.Scaling, "one of %s", strings.Join(pipelineScalings, ", "))
		}
	}
	for i, m := range w.Models {
		f := fmt.Sprintf("models[%d]", i)
		switch {
		case strings.TrimSpace(m.Name) == "":
			bad(f+".name", `""`, "a model name")
		case names[m.Name]:
			bad(f+".name", m.Name, "a name not used by another model")
		}
		names[m.Name] = true
		if !finiteNonNeg(m.SLOMS) {
			bad(f+".slo_ms", m.SLOMS, "a finite number of ms > 0 (0 or absent means the set's SLO)")
		}
		if !finiteNonNeg(m.Rate) {
			bad(f+".rate", m.Rate, "a finite number of requests/s ≥ 0")
		}
		if !finiteNonNeg(m.MemoryMB) {
			bad(f+".memory_mb", m.MemoryMB, "a finite number of MB ≥ 0 (0 means the set's estimate)")
		}
		if m.Arrival != "" {
			if _, err := arrival.Parse(m.Arrival); err != nil {
				bad(f+".arrival", m.Arrival, "poisson, constant, gamma:<shape>, gamma:cv=<c>, trace:<file>, trace:<file>@<rate scale> or intervals:<file>")
			}
		}
	}
	var last Duration = -1
	for i, p := range w.Phases {
		f := fmt.Sprintf("phases[%d]", i)
		if p.At < 0 || p.At <= last {
			bad(f+".at", p.At.Std(), "≥ 0 and later than the phase before")
		}
		last = p.At
		for _, name := range sortedKeys(p.Rates) {
			if !names[name] {
				bad(f+".rates", name, "names of models in models (or of pipelines)")
			}
			if r := p.Rates[name]; !finiteNonNeg(r) {
				bad(f+".rates."+name, r, "a finite number of requests/s ≥ 0")
			}
		}
	}
	if w.Duration < 0 {
		bad("duration", w.Duration.Std(), "a duration ≥ 0")
	}
	if w.Reorganize != nil && *w.Reorganize < 0 {
		bad("reorganize", w.Reorganize.Std(), "a period ≥ 0 (0s plans once)")
	}
	if w.Startup != nil && *w.Startup < 0 {
		bad("startup", w.Startup.Std(), "a duration ≥ 0")
	}
	if w.Algo != "" && !slices.Contains(gpulet.Algos(), gpulet.Algo(w.Algo)) {
		bad("algo", w.Algo, "one of %s", algoNames())
	}
	if w.Policy != "" {
		if _, err := sched.ParsePolicy(w.Policy); err != nil {
			bad("policy", w.Policy, "deferred, eager, timeout:<duration> or flex")
		}
	}
	return errors.Join(errs...)
}

// pipelineScalings are the values of Pipeline.Scaling.
var pipelineScalings = []string{string(control.ScaleJointly), string(control.ScaleHardware), string(control.ScalePerTask)}

func finiteNonNeg(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }

func algoNames() string { return strings.Join(gpulet.AlgoNames(), ", ") }

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// maxSetBatch bounds a linear set's batch sizes.
const maxSetBatch = 4096

// validateSets checks the workload's own profile sets.
func (w *Workload) validateSets() []error {
	var errs []error
	bad := func(field string, value any, allowed string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Value: value, Allowed: fmt.Sprintf(allowed, args...)})
	}
	names := map[string]bool{}
	for i, s := range w.Sets {
		f := fmt.Sprintf("sets[%d]", i)
		switch {
		case strings.TrimSpace(s.Name) == "":
			bad(f+".name", `""`, "a set name")
		case slices.Contains(refset.Names(), s.Name):
			bad(f+".name", s.Name, "a name that is not a reference set's (%s)", strings.Join(refset.Names(), ", "))
		case names[s.Name]:
			bad(f+".name", s.Name, "a name not used by another set")
		}
		names[s.Name] = true
		if !finiteNonNeg(s.MemoryGiB) {
			bad(f+".memory_gib", s.MemoryGiB, "a finite number of GiB ≥ 0 (0 means %v)", defaultSetMemoryGiB)
		}
		if s.MaxBatch < 0 || s.MaxBatch > maxSetBatch {
			bad(f+".max_batch", s.MaxBatch, "a batch size in 1..%d (0 means %d)", maxSetBatch, defaultSetMaxBatch)
		}
		if len(s.Models) == 0 {
			bad(f+".models", "[]", "at least one model")
		}
		seen := map[string]bool{}
		for j, m := range s.Models {
			mf := fmt.Sprintf("%s.models[%d]", f, j)
			switch {
			case strings.TrimSpace(m.Name) == "":
				bad(mf+".name", `""`, "a model name")
			case seen[m.Name]:
				bad(mf+".name", m.Name, "a name not used by another model of the set")
			}
			seen[m.Name] = true
			if !(m.AlphaMS > 0) || math.IsInf(m.AlphaMS, 0) {
				bad(mf+".alpha_ms", m.AlphaMS, "a finite number of ms > 0")
			}
			if !finiteNonNeg(m.BetaMS) {
				bad(mf+".beta_ms", m.BetaMS, "a finite number of ms ≥ 0")
			}
			if !finiteNonNeg(m.SLOMS) {
				bad(mf+".slo_ms", m.SLOMS, "a finite number of ms ≥ 0 (0: none)")
			}
		}
	}
	return errs
}
