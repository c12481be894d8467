package planbench

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/interference"
	"github.com/gpulet/gpuletd/profiler/refset"
)

// ErrBadArgs is returned for arguments no experiment can run with.
var ErrBadArgs = errors.New("bad benchmark arguments")

// Model is one model of a node with what the planners need of it.
type Model struct {
	Name    string
	Profile *gpulet.Profile
	// SLOMS is the source's SLO, or gpulet.PaperSLO where it gives none.
	SLOMS float64
}

// Node is a reference set's device type, a number of its GPUs and its
// models: the fixed part of every scenario.
type Node struct {
	Set    *refset.Set
	GPUs   []gpulet.GPU
	Models []Model
	// Interference is the set's interference model (nil for a set without
	// co-location data): refset.NewPhysics's, trained on the set's measured
	// pairs.
	Interference *interference.Model
	// PlanLimit bounds each plan of the max-rate searches (0: none); a
	// plan past it counts as not schedulable and the figure as a lower
	// bound. NewNode sets DefaultPlanLimit.
	PlanLimit time.Duration
}

// DefaultPlanLimit is the time each plan of a max-rate search may take.
// Ideal searches every layout; on 4 MIG A100s with 11 models it does not
// finish near capacity, while on igniter-v100 every plan takes under a
// second.
const DefaultPlanLimit = 10 * time.Second

// NewNode builds a node of n GPUs of the set's device type.
func NewNode(set *refset.Set, n int) (*Node, error) {
	if n < 1 {
		return nil, fmt.Errorf("build node of %s: %w: %d GPUs", set.Name, ErrBadArgs, n)
	}
	ph, err := refset.NewPhysics(set, nil)
	if err != nil {
		return nil, fmt.Errorf("build node of %s: %w", set.Name, err)
	}
	node := &Node{Set: set, Interference: ph.Model(), PlanLimit: DefaultPlanLimit}
	for i := range n {
		node.GPUs = append(node.GPUs, GPUOf(set, fmt.Sprintf("gpu%d", i)))
	}
	for _, m := range set.Models {
		slo, err := SLOOf(m)
		if err != nil {
			return nil, fmt.Errorf("build node of %s: %w", set.Name, err)
		}
		node.Models = append(node.Models, Model{Name: m.Name, Profile: m.Profile, SLOMS: slo})
	}
	return node, nil
}

// GPUOf describes one GPU of a reference set: whole, MPS with the set's
// sizes, or MIG with the set's MIG table and as many instances as the GPU
// can make.
func GPUOf(set *refset.Set, id string) gpulet.GPU {
	g := gpulet.GPU{ID: id, Type: set.DeviceType, MemoryMB: set.MemoryGiB * 1024, Backend: gpulet.BackendMPS, Sizes: set.Sizes}
	switch set.Partitioning {
	case refset.PartitionNone:
		g.Backend = gpulet.BackendNone
	case refset.PartitionMIG:
		g.Backend, g.MIGModel, g.MaxGPULets = gpulet.BackendMIG, set.MIGModel, MIGMaxInstances
	}
	return g
}

// MIGMaxInstances is the most MIG instances the benches let one GPU hold:
// seven, one per compute slice of an A100 or H100.
const MIGMaxInstances = 7

// SLOOf is a model's SLO: the source's where it gives one, otherwise the
// gpu-let paper's rule (gpulet.PaperSLO: twice the solo batch-32 latency
// on a whole GPU). This is the one place the rule is applied to a set.
func SLOOf(m *refset.Model) (float64, error) {
	if m.SLOMS > 0 {
		return m.SLOMS, nil
	}
	slo, ok := gpulet.PaperSLO(m.Profile)
	if !ok {
		return 0, fmt.Errorf("derive SLO of %s: %w: no L(%d,100) in its profile", m.Name, gpulet.ErrNoProfile, gpulet.PaperSLOBatch)
	}
	return slo, nil
}

// Input is the planner input for the given rate per model (by index in
// Models; missing or zero rates are left out).
func (n *Node) Input(rates []float64) gpulet.Input {
	in := gpulet.Input{GPUs: n.GPUs}
	for i, m := range n.Models {
		if i < len(rates) && rates[i] != 0 {
			in.Demands = append(in.Demands, gpulet.Demand{Name: m.Name, Profile: m.Profile, SLOMS: m.SLOMS, Rate: rates[i]})
		}
	}
	return in
}

// Options returns the planner options of the node: its interference model
// with gpulet.DefaultInterferenceMargin.
func (n *Node) Options() gpulet.Options {
	o := gpulet.Options{InterferenceMargin: gpulet.DefaultInterferenceMargin}
	if n.Interference != nil {
		o.Interference = n.Interference
	}
	return o
}

// LoadNode loads the named reference set and builds a node of n of its
// GPUs.
func LoadNode(set string, n int) (*Node, error) {
	s, err := refset.Load(set)
	if err != nil {
		return nil, fmt.Errorf("load node: %w", err)
	}
	return NewNode(s, n)
}
