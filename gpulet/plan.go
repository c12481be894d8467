package gpulet

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
)

// Plan is a planner's answer: per GPU its gpu-lets and the models placed on
// them, and the rate nobody could take. Its JSON is what `gpuletd plan
// --json` prints (DESIGN.md §11): schedulable, gpus[].id,
// gpus[].gpulets[].size, gpus[].gpulets[].models[].{name,batch,rate,latency_ms}
// and unscheduled, plus extra fields.
type Plan struct {
	// Algo is the planner that made the plan.
	Algo Algo `json:"algo"`
	// Schedulable is true when every demand's rate is placed.
	Schedulable bool `json:"schedulable"`
	// GPUs lists every GPU of the input, in input order, used or not.
	GPUs []GPUPlan `json:"gpus"`
	// Unscheduled is the rate (requests/s) of each model that no gpu-let
	// takes; a model whose rate is fully placed is absent. A demand that
	// is invalid (negative or non-finite rate) is listed with 0.
	Unscheduled map[string]float64 `json:"unscheduled"`
	// Reasons says why each entry of Unscheduled is there.
	Reasons map[string]string `json:"unscheduled_reasons,omitempty"`
	// Unplaceable lists, sorted, the models no gpu-let can take at any
	// rate: an invalid demand, no profile for the node's GPUs, an SLO no
	// batch meets alone, more memory than any gpu-let has. Their rate is
	// in Unscheduled too; no other placement would change that.
	Unplaceable []string `json:"unplaceable,omitempty"`
	// Spread is set on the plan of an idle node (control.Plan): no model
	// had traffic to plan for, so every model was given an equal share of
	// the GPUs' time, as much as the node holds, rather than the least
	// room a model needs. Its rates are room, not load.
	Spread bool `json:"spread,omitempty"`
}

// GPUPlan is one GPU of a plan.
type GPUPlan struct {
	ID      string   `json:"id"`
	Type    string   `json:"type"`
	Backend Backend  `json:"backend"`
	GPULets []GPULet `json:"gpulets"`
	// MemoryMB is the GPU's memory; MemoryUsedMB what the placed models
	// need, one copy per process (Placement.Procs).
	MemoryMB     float64 `json:"memory_mb"`
	MemoryUsedMB float64 `json:"memory_used_mb"`
}

// GPULet is one partition of a GPU and the models that share it in time.
type GPULet struct {
	// Size is the share of the GPU, percent.
	Size int `json:"size"`
	// MIGProfile and MIGStart name the MIG instance (profile and first
	// memory slot, as migrules.Place gives them) on a MIG GPU.
	MIGProfile string `json:"mig_profile,omitempty"`
	MIGStart   int    `json:"mig_start,omitempty"`
	// DutyMS is the duty cycle: every model runs one batch per cycle, so a
	// request waits at most one cycle before its batch starts.
	DutyMS float64 `json:"duty_ms"`
	// Occupancy is the busy share of the duty cycle (sum of the models'
	// batch latencies over DutyMS), at most 1.
	Occupancy float64     `json:"occupancy"`
	Models    []Placement `json:"models"`
}

// Placement is one model on one gpu-let.
type Placement struct {
	// Name is the demand's model name.
	Name string `json:"name"`
	// Batch is the batch size the gpu-let's scheduler aims for.
	Batch int `json:"batch"`
	// Procs is how many processes of the model share the gpu-let and run
	// the batch together, each a part of it (MPS inside a MIG instance,
	// from a profile measured that way, Point.Procs); 0 means one.
	Procs int `json:"procs,omitempty"`
	// Rate is the request rate assigned to this gpu-let, requests/s.
	Rate float64 `json:"rate"`
	// LatencyMS is the predicted latency of one batch with interference:
	// SoloMS × Factor.
	LatencyMS float64 `json:"latency_ms"`
	// SoloMS is L(Batch, Size) from the profile.
	SoloMS float64 `json:"solo_ms"`
	// Factor is the predicted slowdown from the neighbouring gpu-lets (the
	// worst over their models), 1 without interference.
	Factor float64 `json:"factor"`
	// WorstMS is the predicted worst-case latency of a request: one duty
	// cycle of waiting plus its batch, at most SLOMS.
	WorstMS float64 `json:"worst_ms"`
	SLOMS   float64 `json:"slo_ms"`
	// MemoryMB is what one loaded copy of the model needs on the GPU; each
	// of its Procs processes loads one.
	MemoryMB float64 `json:"memory_mb"`
}

// Placement is the named model's placement on l; one with the name alone
// when l has none.
func (l GPULet) Placement(name string) Placement {
	for _, p := range l.Models {
		if p.Name == name {
			return p
		}
	}
	return Placement{Name: name}
}

// HeldMB is what the placement's model holds on the GPU: MemoryMB for each
// of its processes.
func (p Placement) HeldMB() float64 { return p.MemoryMB * float64(max(p.Procs, 1)) }

// Assigned returns the rate placed per model over all gpu-lets.
func (p *Plan) Assigned() map[string]float64 {
	out := map[string]float64{}
	for _, g := range p.GPUs {
		for _, l := range g.GPULets {
			for _, m := range l.Models {
				out[m.Name] += m.Rate
			}
		}
	}
	return out
}

// UsedGPUs counts the GPUs that hold at least one gpu-let.
func (p *Plan) UsedGPUs() int {
	n := 0
	for _, g := range p.GPUs {
		if len(g.GPULets) > 0 {
			n++
		}
	}
	return n
}

// UnscheduledRate is the sum of Unscheduled.
func (p *Plan) UnscheduledRate() float64 {
	var s float64
	for _, k := range slices.Sorted(maps.Keys(p.Unscheduled)) {
		s += p.Unscheduled[k]
	}
	return s
}

// WriteJSON writes the plan as indented JSON.
func (p *Plan) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}
