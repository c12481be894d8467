package workload

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gpulet/gpuletd/control"
	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/migrules"
	"github.com/gpulet/gpuletd/pipeline"
	"github.com/gpulet/gpuletd/profiler/refset"
)

// Node is a workload resolved against its profile sets: the planner's
// input and options and what a simulation needs beside them.
type Node struct {
	Input   gpulet.Input
	Options gpulet.Options
	// Sets maps each GPU's Type (its set's device type) to the set.
	Sets map[string]*refset.Set
	// Physics maps each GPU's Type to the emulated physics of its set.
	Physics map[string]*refset.Physics
	// Profiles[i] is model i's name inside the sets.
	Profiles []string
	// Pipelines are the workload's pipelines, in file order; their
	// variants are demands of Input (rate 0: the pipeline planner places
	// them), one per variant name.
	Pipelines []*pipeline.Pipeline
}

// Input builds the planner input of a workload (see Resolve).
func (w *Workload) Input() (gpulet.Input, gpulet.Options, error) {
	n, err := w.Resolve()
	if err != nil {
		return gpulet.Input{}, gpulet.Options{InterferenceMargin: gpulet.DefaultInterferenceMargin}, err
	}
	return n.Input, n.Options, nil
}

// Resolve builds the planner input of a workload from the profile sets its
// devices name (the file's own sets, else reference sets, refset.Load):
// one GPU per counted device, ids gpu0, gpu1, … in file order; one demand
// per model with its profile from every set that has it, its SLO (the
// file's, else the set's, else gpulet.PaperSLO) and its rate. The options
// carry the interference model of the sets' measured co-locations
// (refset.NewPhysics; none when no set has any) with
// gpulet.DefaultInterferenceMargin. A profile set that is not known, a model
// no set has and a layout the set cannot serve are errors naming the field.
func (w *Workload) Resolve() (*Node, error) {
	node := &Node{Sets: map[string]*refset.Set{}, Physics: map[string]*refset.Physics{}}
	in := &node.Input
	opts := &node.Options
	opts.InterferenceMargin = gpulet.DefaultInterferenceMargin
	rule, err := gpulet.ParseRule(w.Rule)
	if err != nil {
		return nil, &FieldError{Field: "rule", Value: w.Rule, Allowed: "serving or parvagpu"}
	}
	opts.Rule = rule
	sets := map[string]*refset.Set{}
	var order []*refset.Set
	var predSet string
	for i, d := range w.Devices {
		f := fmt.Sprintf("devices[%d]", i)
		set, ok := sets[d.Profiles]
		if !ok {
			s, err := w.loadSet(d.Profiles)
			if err != nil {
				return nil, &FieldError{Field: f + ".profiles", Value: d.Profiles,
					Allowed: "a reference profile set: " + strings.Join(refset.Names(), ", ") + ", or a set of the file's sets (stored device types need the daemon's store)"}
			}
			set = s
			sets[d.Profiles] = s
			order = append(order, s)
			ph, err := refset.NewPhysics(s, nil)
			if err != nil {
				return nil, fmt.Errorf("build physics of %s: %w", s.Name, err)
			}
			node.Sets[s.DeviceType] = s
			node.Physics[s.DeviceType] = ph
			if len(s.Pairs) > 0 {
				if predSet != "" {
					return nil, &FieldError{Field: f + ".profiles", Value: d.Profiles, Allowed: "one set with co-location data per node (" + predSet + " has some)"}
				}
				if m := ph.Model(); m != nil {
					opts.Interference = m
					predSet = s.Name
				}
			}
		}
		g, err := gpuOf(set, d, f)
		if err != nil {
			return nil, err
		}
		for range max(d.Count, 1) {
			g.ID = fmt.Sprintf("gpu%d", len(in.GPUs))
			in.GPUs = append(in.GPUs, g)
		}
	}
	for i, m := range w.Models {
		f := fmt.Sprintf("models[%d]", i)
		name := m.Profile
		if name == "" {
			name = m.Name
		}
		d := gpulet.Demand{Name: m.Name, SLOMS: m.SLOMS, Rate: m.Rate, MemoryMB: m.MemoryMB}
		var setSLO float64
		var known []string
		for _, s := range order {
			sm, ok := s.Model(name)
			known = append(known, s.ModelNames()...)
			if !ok {
				continue
			}
			if d.Profile == nil {
				d.Profile, setSLO = sm.Profile, sm.SLOMS
			} else {
				d.More = append(d.More, sm.Profile)
			}
		}
		if d.Profile == nil {
			slices.Sort(known)
			return nil, &FieldError{Field: f + ".profile", Value: name, Allowed: "a model of the device sets: " + strings.Join(slices.Compact(known), ", ")}
		}
		if d.SLOMS == 0 {
			d.SLOMS = setSLO
		}
		if d.SLOMS == 0 {
			slo, ok := gpulet.PaperSLO(d.Profile)
			if !ok {
				return nil, &FieldError{Field: f + ".slo_ms", Value: 0, Allowed: fmt.Sprintf("an SLO: the set gives none and %s has no L(%d,100) for the default rule", name, gpulet.PaperSLOBatch)}
			}
			d.SLOMS = slo
		}
		in.Demands = append(in.Demands, d)
		node.Profiles = append(node.Profiles, name)
	}
	if err := node.resolvePipelines(w, order); err != nil {
		return nil, err
	}
	return node, nil
}

// resolvePipelines builds the workload's pipelines with the batch times of
// the first set that profiles each variant (on a whole GPU, a pipeline's
// worker) and adds every variant as a demand.
func (node *Node) resolvePipelines(w *Workload, sets []*refset.Set) error {
	profile := func(name string) (pipeline.LatencyFunc, int, bool) {
		for _, s := range sets {
			if f, mb, ok := pipeline.SetProfile(s, 100)(name); ok {
				return f, mb, true
			}
		}
		return nil, 0, false
	}
	seen := map[string]bool{}
	for i, wp := range w.Pipelines {
		f := fmt.Sprintf("pipelines[%d]", i)
		p, err := pipeline.Builtin(wp.Builtin, profile)
		if err != nil {
			var names []string
			for _, s := range sets {
				names = append(names, s.Name)
			}
			return &FieldError{Field: f + ".builtin", Value: wp.Builtin, Allowed: fmt.Sprintf("a pipeline whose variants the device sets (%s) profile: %v", strings.Join(names, ", "), err)}
		}
		p.Name, p.MinAccuracy = wp.PipelineName(), wp.MinAccuracy
		node.Pipelines = append(node.Pipelines, p)
		for _, t := range p.Tasks {
			for _, v := range t.Variants {
				if seen[v.Name] {
					return &FieldError{Field: f, Value: v.Name, Allowed: "pipelines without variants in common"}
				}
				seen[v.Name] = true
				var prof *gpulet.Profile
				for _, s := range sets {
					if sm, ok := s.Model(v.Name); ok {
						prof = sm.Profile
						break
					}
				}
				node.Input.Demands = append(node.Input.Demands, gpulet.Demand{Name: v.Name, SLOMS: float64(p.SLO.Milliseconds()), Profile: prof})
				node.Profiles = append(node.Profiles, v.Name)
			}
		}
	}
	return nil
}

// Defaults of a workload's own set.
const (
	defaultSetMemoryGiB = 16
	defaultSetMaxBatch  = 32
)

// loadSet returns the file's set of that name, built from its lines, or
// else the reference set.
func (w *Workload) loadSet(name string) (*refset.Set, error) {
	for _, ls := range w.Sets {
		if ls.Name == name {
			return ls.build()
		}
	}
	return refset.Load(name)
}

// build turns a linear set into a reference set of whole GPUs.
func (ls LinearSet) build() (*refset.Set, error) {
	src := &refset.Source{Meta: refset.Meta{
		Name: ls.Name, GPU: ls.GPU, Origin: "workload file", Citation: ls.Source,
		Partitioning: refset.PartitionNone, Sizes: []int{100},
		MemoryGiB: ls.MemoryGiB, MaxBatch: ls.MaxBatch,
	}}
	if src.Meta.MemoryGiB == 0 {
		src.Meta.MemoryGiB = defaultSetMemoryGiB
	}
	if src.Meta.MaxBatch == 0 {
		src.Meta.MaxBatch = defaultSetMaxBatch
	}
	for _, m := range ls.Models {
		src.Models = append(src.Models, refset.ModelName{Name: m.Name, Label: m.Name})
		src.Linear = append(src.Linear, refset.LinearModel{Model: m.Name, AlphaMS: m.AlphaMS, BetaMS: m.BetaMS, SLOMS: m.SLOMS})
	}
	s, err := refset.Build(src)
	if err != nil {
		return nil, fmt.Errorf("build set %s: %w", ls.Name, err)
	}
	return s, nil
}

// gpuOf describes a GPU of a device group.
func gpuOf(set *refset.Set, d Device, field string) (gpulet.GPU, error) {
	g := gpulet.GPU{Type: set.DeviceType, MemoryMB: set.MemoryGiB * 1024, Sizes: slices.Clone(d.Sizes), MaxGPULets: d.MaxGPULets}
	if d.MemoryMB > 0 {
		g.MemoryMB = d.MemoryMB
	}
	part := d.Partitioning
	if part == "" {
		part = set.Partitioning
	}
	switch gpulet.Backend(part) {
	case gpulet.BackendMPS:
		if set.Partitioning == refset.PartitionMIG {
			return g, &FieldError{Field: field + ".partitioning", Value: part, Allowed: fmt.Sprintf("mig: %s has MIG instance profiles only", set.Name)}
		}
		if set.Partitioning != refset.PartitionMPS {
			return g, &FieldError{Field: field + ".partitioning", Value: part, Allowed: fmt.Sprintf("none: %s has whole-GPU profiles only", set.Name)}
		}
		g.Backend = gpulet.BackendMPS
		if len(g.Sizes) == 0 {
			g.Sizes = slices.Clone(set.Sizes)
		}
		for _, s := range g.Sizes {
			if !slices.Contains(set.Sizes, s) {
				return g, &FieldError{Field: field + ".sizes", Value: d.Sizes, Allowed: fmt.Sprintf("sizes %s has profiles for: %v", set.Name, set.Sizes)}
			}
		}
	case gpulet.BackendMIG:
		if set.Partitioning == refset.PartitionNone {
			return g, &FieldError{Field: field + ".partitioning", Value: part, Allowed: fmt.Sprintf("none: %s has whole-GPU profiles only", set.Name)}
		}
		table := d.MIG
		if table == "" {
			table = set.GPU
			if set.MIGModel != "" {
				table = set.MIGModel
			}
		}
		t, err := migrules.Lookup(table)
		if err != nil {
			return g, &FieldError{Field: field + ".mig", Value: d.MIG, Allowed: fmt.Sprintf("a MIG table (%s); %s has none of its own", strings.Join(migrules.Models(), ", "), set.GPU)}
		}
		g.Backend, g.MIGModel = gpulet.BackendMIG, t.Model
		for _, s := range g.Sizes {
			if _, err := t.ProfileForSize(s); err != nil {
				return g, &FieldError{Field: field + ".sizes", Value: d.Sizes, Allowed: fmt.Sprintf("MIG profile sizes of %s: %v", t.Model, t.Sizes())}
			}
		}
	default:
		g.Backend, g.Sizes = gpulet.BackendNone, nil
	}
	return g, nil
}

// PlannerAlgo is the workload's planner, or the override when it is not empty;
// gpulet-int when neither names one.
func (w *Workload) PlannerAlgo(override string) (gpulet.Algo, error) {
	a := override
	if a == "" {
		a = w.Algo
	}
	if a == "" {
		return gpulet.AlgoGpuletInt, nil
	}
	if !slices.Contains(gpulet.Algos(), gpulet.Algo(a)) {
		return "", &FieldError{Field: "algo", Value: a, Allowed: "one of " + algoNames()}
	}
	return gpulet.Algo(a), nil
}

// Plan is `gpuletd plan`: the workload planned with its planner, or with
// algo when that is not empty.
func Plan(ctx context.Context, w *Workload, algo string) (*gpulet.Plan, error) {
	a, err := w.PlannerAlgo(algo)
	if err != nil {
		return nil, err
	}
	if len(w.Pipelines) > 0 {
		return planPipeline(w)
	}
	in, opts, err := w.Input()
	if err != nil {
		return nil, err
	}
	p, err := gpulet.Run(ctx, a, in, opts)
	if err != nil {
		return nil, fmt.Errorf("plan workload: %w", err)
	}
	return p, nil
}

// planPipeline lays out the workload's pipeline for its rate, as the node
// plans it at the start (control.PlanPipeline).
func planPipeline(w *Workload) (*gpulet.Plan, error) {
	node, err := w.Resolve()
	if err != nil {
		return nil, err
	}
	wp := w.Pipelines[0]
	sc := control.PipelineScaling(wp.Scaling)
	if sc == "" {
		sc = control.ScaleJointly
	}
	_, p, err := control.PlanPipeline(node.Pipelines[0], sc, control.PipelineDemand{Rate: wp.Rate}, node.Input.GPUs, nil)
	if err != nil {
		return nil, fmt.Errorf("plan workload: %w", err)
	}
	return p, nil
}

// PlanFile loads a workload file and plans it.
func PlanFile(ctx context.Context, path, algo string) (*gpulet.Plan, error) {
	w, err := Load(path)
	if err != nil {
		return nil, err
	}
	return Plan(ctx, w, algo)
}
