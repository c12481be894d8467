package sim

import (
	"fmt"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/sim/workload"
)

// Everywhere is the plan of a shared cluster, as Symphony schedules one
// (Symphony §3.2: any model's batch may run on any GPU): every GPU is one
// gpu-let of 100% holding every model that has a profile for it, and each
// model's rate is split evenly over its gpu-lets. The router and the
// executors' scheduling core then decide everything; the planner's
// admission rule (2·ℓ(b) ≤ SLO) plays no part.
func Everywhere(w *workload.Workload) (*gpulet.Plan, error) {
	n, err := w.Resolve()
	if err != nil {
		return nil, fmt.Errorf("plan everywhere: %w", err)
	}
	p := &gpulet.Plan{Algo: "everywhere", Schedulable: true, Unscheduled: map[string]float64{}}
	count := map[string]int{}
	for _, g := range n.Input.GPUs {
		for _, d := range n.Input.Demands {
			if profileOf(d, g.Type) != nil {
				count[d.Name]++
			}
		}
	}
	for _, g := range n.Input.GPUs {
		gp := gpulet.GPUPlan{ID: g.ID, Type: g.Type, Backend: g.Backend, MemoryMB: g.MemoryMB}
		let := gpulet.GPULet{Size: 100}
		for _, d := range n.Input.Demands {
			prof := profileOf(d, g.Type)
			if prof == nil {
				continue
			}
			l, _ := prof.Latency(1, 100)
			let.Models = append(let.Models, gpulet.Placement{Name: d.Name, Batch: 1, Rate: d.Rate / float64(count[d.Name]),
				LatencyMS: l, SoloMS: l, Factor: 1, SLOMS: d.SLOMS, MemoryMB: prof.MemoryMB})
		}
		if len(let.Models) > 0 {
			gp.GPULets = append(gp.GPULets, let)
		}
		p.GPUs = append(p.GPUs, gp)
	}
	for _, d := range n.Input.Demands {
		if count[d.Name] == 0 {
			p.Schedulable = false
			p.Unscheduled[d.Name] = d.Rate
		}
	}
	return p, nil
}

// profileOf is the demand's profile for a device type, nil when none.
func profileOf(d gpulet.Demand, typ string) *gpulet.Profile {
	if d.Profile != nil && d.Profile.DeviceType == typ {
		return d.Profile
	}
	for _, p := range d.More {
		if p.DeviceType == typ {
			return p
		}
	}
	return nil
}

// Dedicated is the plan of a cluster cut into one sub-cluster per model:
// model i (in workload order) alone on GPUs i·k … i·k+k−1, one gpu-let of
// 100% each, its rate split evenly over them. The workload must have
// exactly k GPUs per model, each with the model's profile.
func Dedicated(w *workload.Workload, k int) (*gpulet.Plan, error) {
	n, err := w.Resolve()
	if err != nil {
		return nil, fmt.Errorf("plan dedicated GPUs: %w", err)
	}
	if k < 1 || len(n.Input.GPUs) != k*len(n.Input.Demands) {
		return nil, fmt.Errorf("plan dedicated GPUs: %w: %d GPUs for %d models × %d", ErrBadOptions, len(n.Input.GPUs), len(n.Input.Demands), k)
	}
	p := &gpulet.Plan{Algo: "dedicated", Schedulable: true, Unscheduled: map[string]float64{}}
	for gi, g := range n.Input.GPUs {
		d := n.Input.Demands[gi/k]
		prof := profileOf(d, g.Type)
		if prof == nil {
			return nil, fmt.Errorf("plan dedicated GPUs: %s has no profile for %s: %w", d.Name, g.Type, gpulet.ErrNoProfile)
		}
		l, _ := prof.Latency(1, 100)
		p.GPUs = append(p.GPUs, gpulet.GPUPlan{ID: g.ID, Type: g.Type, Backend: g.Backend, MemoryMB: g.MemoryMB,
			GPULets: []gpulet.GPULet{{Size: 100, Models: []gpulet.Placement{{Name: d.Name, Batch: 1, Rate: d.Rate / float64(k),
				LatencyMS: l, SoloMS: l, Factor: 1, SLOMS: d.SLOMS, MemoryMB: prof.MemoryMB}}}}})
	}
	return p, nil
}
