package verify

import (
	"fmt"
	"math"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/migrules"
)

// Placement is a model running batches of Batch on a gpu-let of Size
// percent. Model is the profile's model name (gpulet.Profile.Model).
type Placement struct {
	Model string
	Batch int
	Size  int
}

// Physics answers how long batches take on the device.
type Physics interface {
	// Solo is the latency of a batch alone on its gpu-let, ms.
	Solo(p Placement) (float64, error)
	// CoLocated is the latency of a's batch and of b's batch while they run
	// at the same time on two gpu-lets of one GPU, ms.
	CoLocated(a, b Placement) (aMS, bMS float64, err error)
}

// Rules a plan can break (Violation.Rule).
const (
	RuleGPUs        = "gpus"        // the plan's GPUs are not the input's
	RuleSize        = "size"        // a size not allowed, or sizes over 100%
	RuleCount       = "count"       // more gpu-lets than the GPU may hold
	RuleMIG         = "mig"         // a MIG layout the hardware refuses
	RuleMemory      = "memory"      // models need more memory than there is
	RuleBatch       = "batch"       // a batch outside the profile
	RuleLatency     = "latency"     // worst-case latency over the SLO
	RuleThroughput  = "throughput"  // the gpu-let cannot keep up with its rate
	RuleAccounting  = "accounting"  // placed + unscheduled ≠ demanded
	RuleSchedulable = "schedulable" // the flag disagrees with Unscheduled
	RulePhysics     = "physics"     // the physics cannot answer
)

// Violation is one broken rule.
type Violation struct {
	Rule   string
	GPU    string
	GPULet int // index in the GPU's gpu-lets, -1 for the GPU or plan
	Model  string
	Detail string
}

// String writes the violation on one line.
func (v Violation) String() string {
	return fmt.Sprintf("%s: gpu %q gpu-let %d model %q: %s", v.Rule, v.GPU, v.GPULet, v.Model, v.Detail)
}

// tol absorbs rounding in rates and latencies.
const tol = 1e-6

// Check verifies a plan made for in against the physics. A model's batch
// latency on a gpu-let is its solo latency when no other gpu-let of the GPU
// runs anything (or the GPU is MIG, whose instances do not share L2 or
// memory bandwidth), otherwise the worst of its co-located latencies with
// each model of each other gpu-let. A gpu-let's shortest cycle is the sum
// of its models' batch latencies; model m keeps up when b_m requests per
// cycle cover its rate (b_m / cycle ≥ rate_m) and meets its SLO when a
// request waiting one cycle and then running its batch finishes in time
// (cycle + L_m ≤ SLO_m). A cycle D with the plan's batches exists exactly
// when the shortest one passes both checks (throughput needs D ≤ b_m/rate_m,
// latency D ≤ SLO_m − L_m, and D is at least the sum), so the check
// neither trusts nor needs the planner's own duty cycle.
func Check(plan *gpulet.Plan, in gpulet.Input, ph Physics) []Violation {
	var out []Violation
	add := func(rule, gpu string, let int, model, format string, args ...any) {
		out = append(out, Violation{Rule: rule, GPU: gpu, GPULet: let, Model: model, Detail: fmt.Sprintf(format, args...)})
	}
	demands := map[string]gpulet.Demand{}
	for _, d := range in.Demands {
		if _, dup := demands[d.Name]; !dup {
			demands[d.Name] = d
		}
	}
	if len(plan.GPUs) != len(in.GPUs) {
		add(RuleGPUs, "", -1, "", "plan has %d GPUs, input %d", len(plan.GPUs), len(in.GPUs))
	}
	placed := map[string]float64{}
	for gi, gp := range plan.GPUs {
		if gi >= len(in.GPUs) {
			break
		}
		g := in.GPUs[gi]
		if gp.ID != g.ID {
			add(RuleGPUs, gp.ID, -1, "", "GPU %d is %q in the plan, %q in the input", gi, gp.ID, g.ID)
			continue
		}
		out = append(out, checkLayout(gp, g)...)
		out = append(out, checkMemory(gp, g, demands)...)
		for li, l := range gp.GPULets {
			for _, m := range l.Models {
				placed[m.Name] += m.Rate
			}
			out = append(out, checkLet(gp, g, li, demands, ph)...)
		}
	}
	for name, d := range demands {
		if !(d.Rate >= 0) || math.IsInf(d.Rate, 0) {
			continue
		}
		got := placed[name] + plan.Unscheduled[name]
		if math.Abs(got-d.Rate) > tol*max(1, d.Rate) {
			add(RuleAccounting, "", -1, name, "demanded %.6g req/s, placed %.6g + unscheduled %.6g", d.Rate, placed[name], plan.Unscheduled[name])
		}
	}
	for name := range placed {
		if _, ok := demands[name]; !ok {
			add(RuleAccounting, "", -1, name, "placed but not demanded")
		}
	}
	if plan.Schedulable != (len(plan.Unscheduled) == 0) {
		add(RuleSchedulable, "", -1, "", "schedulable=%v with %d unscheduled models", plan.Schedulable, len(plan.Unscheduled))
	}
	return out
}

// checkLayout checks the sizes of a GPU's gpu-lets.
func checkLayout(gp gpulet.GPUPlan, g gpulet.GPU) []Violation {
	var out []Violation
	add := func(rule, format string, args ...any) {
		out = append(out, Violation{Rule: rule, GPU: g.ID, GPULet: -1, Detail: fmt.Sprintf(format, args...)})
	}
	maxLets := g.MaxGPULets
	if maxLets == 0 {
		maxLets = gpulet.DefaultMaxGPULets
	}
	if g.Backend == gpulet.BackendNone {
		maxLets = 1
	}
	if len(gp.GPULets) > maxLets {
		add(RuleCount, "%d gpu-lets, at most %d", len(gp.GPULets), maxLets)
	}
	sum := 0
	var profiles []string
	for _, l := range gp.GPULets {
		sum += l.Size
		profiles = append(profiles, l.MIGProfile)
		if g.Backend == gpulet.BackendNone && l.Size != 100 {
			add(RuleSize, "size %d on a GPU that is not partitioned", l.Size)
		}
	}
	if g.Backend == gpulet.BackendMIG {
		name := g.MIGModel
		if name == "" {
			name = g.Type
		}
		if len(profiles) > 0 {
			if err := migrules.ValidLayout(name, profiles); err != nil {
				add(RuleMIG, "layout %v: %v", profiles, err)
			}
		}
		return out
	}
	if sum > 100 {
		add(RuleSize, "sizes sum to %d%%", sum)
	}
	return out
}

// checkMemory checks that the models fit the GPU (and each MIG instance).
func checkMemory(gp gpulet.GPUPlan, g gpulet.GPU, demands map[string]gpulet.Demand) []Violation {
	var out []Violation
	total := 0.0
	for li, l := range gp.GPULets {
		sum := 0.0
		for _, m := range l.Models {
			sum += float64(max(m.Procs, 1)) * memoryOf(demands[m.Name]) // a copy per process
		}
		if g.Backend == gpulet.BackendMIG {
			if limit, err := migMemory(g, l.MIGProfile); err != nil || sum > limit+tol {
				out = append(out, Violation{Rule: RuleMemory, GPU: g.ID, GPULet: li, Detail: fmt.Sprintf("models need %.0f MB, instance %s has %.0f MB", sum, l.MIGProfile, limit)})
			}
		}
		total += sum
	}
	if total > g.MemoryMB+tol {
		out = append(out, Violation{Rule: RuleMemory, GPU: g.ID, GPULet: -1, Detail: fmt.Sprintf("models need %.0f MB, the GPU has %.0f MB", total, g.MemoryMB)})
	}
	return out
}

func memoryOf(d gpulet.Demand) float64 {
	if d.MemoryMB > 0 || d.Profile == nil {
		return d.MemoryMB
	}
	return d.Profile.MemoryMB
}

// migMemory is a MIG instance's share of the GPU's memory: its memory
// slots out of all of them.
func migMemory(g gpulet.GPU, profile string) (float64, error) {
	name := g.MIGModel
	if name == "" {
		name = g.Type
	}
	t, err := migrules.Lookup(name)
	if err != nil {
		return 0, err
	}
	p, err := t.Profile(profile)
	if err != nil {
		return 0, err
	}
	return g.MemoryMB * float64(p.Size) / float64(t.MemorySlots), nil
}

// profileOn is the demand's profile for a device type.
func profileOn(d gpulet.Demand, typ string) *gpulet.Profile {
	for _, p := range append([]*gpulet.Profile{d.Profile}, d.More...) {
		if p != nil && p.DeviceType == typ {
			return p
		}
	}
	return nil
}

// checkLet checks the latency and throughput of every model of gpu-let li.
func checkLet(gp gpulet.GPUPlan, g gpulet.GPU, li int, demands map[string]gpulet.Demand, ph Physics) []Violation {
	var out []Violation
	l := gp.GPULets[li]
	add := func(rule, model, format string, args ...any) {
		out = append(out, Violation{Rule: rule, GPU: g.ID, GPULet: li, Model: model, Detail: fmt.Sprintf(format, args...)})
	}
	place := func(m gpulet.Placement, size int) (Placement, bool) {
		d, ok := demands[m.Name]
		if !ok {
			return Placement{}, false
		}
		p := profileOn(d, g.Type)
		if p == nil {
			return Placement{}, false
		}
		return Placement{Model: p.Model, Batch: m.Batch, Size: size}, true
	}
	lat := make([]float64, len(l.Models))
	for i, m := range l.Models {
		self, ok := place(m, l.Size)
		if !ok {
			add(RuleAccounting, m.Name, "no demand with a profile for %s", g.Type)
			return out
		}
		p := profileOn(demands[m.Name], g.Type)
		if m.Batch < 1 || m.Batch > p.MaxBatch(l.Size) {
			add(RuleBatch, m.Name, "batch %d outside 1..%d at %d%%", m.Batch, p.MaxBatch(l.Size), l.Size)
			return out
		}
		worst, err := ph.Solo(self)
		if err != nil {
			add(RulePhysics, m.Name, "solo: %v", err)
			return out
		}
		if g.Backend == gpulet.BackendMPS || g.Backend == "" {
			for k, o := range gp.GPULets {
				if k == li {
					continue
				}
				for _, om := range o.Models {
					other, ok := place(om, o.Size)
					if !ok {
						continue
					}
					a, _, err := ph.CoLocated(self, other)
					if err != nil {
						add(RulePhysics, m.Name, "beside %s: %v", om.Name, err)
						return out
					}
					worst = max(worst, a)
				}
			}
		}
		lat[i] = worst
	}
	cycle := 0.0
	for _, x := range lat {
		cycle += x
	}
	for i, m := range l.Models {
		slo := demands[m.Name].SLOMS
		if w := cycle + lat[i]; w > slo*(1+tol) {
			add(RuleLatency, m.Name, "worst case %.4g ms (cycle %.4g + batch %.4g) over SLO %.4g ms", w, cycle, lat[i], slo)
		}
		if thr := 1000 * float64(m.Batch) / cycle; thr < m.Rate*(1-tol) {
			add(RuleThroughput, m.Name, "%d per %.4g ms cycle serves %.6g req/s, assigned %.6g", m.Batch, cycle, thr, m.Rate)
		}
	}
	return out
}
