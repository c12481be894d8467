package gpulet

import (
	"fmt"
	"math"
	"slices"

	"github.com/gpulet/gpuletd/gpulet/migrules"
)

// Costs of moving one GPU from what runs on it to a layout, in model loads
// (alignCost).
const (
	// alignStartCost is an executor's start, beyond the models it loads.
	alignStartCost = 1
	// alignCrowdCost is, per load, the cost of the loads on a GPU not
	// fitting beside what runs there (memory, or a MIG instance's slots):
	// they wait for the old gpu-lets to drain, and the models only they
	// serve have no route meanwhile.
	alignCrowdCost = 2
	// alignNoFit marks a layout that needs more memory than the GPU has.
	alignNoFit = int64(1) << 40
)

// Align lays next's GPU layouts out on the GPUs so that moving from prev
// (usually what runs) costs least. A planner lays a GPU out without knowing
// which one it is: on alike GPUs (gpus of the same type, backend, sizes,
// gpu-let cap and MIG table) any order of its layouts is as good a plan,
// but the order it happens to pick can move every model, each move a load
// and warm-up on one GPU and a drain on another while it serves, and on a
// full GPU a wait for the old gpu-lets' memory. Align gives each layout the
// GPU where it starts the fewest executors and loads the fewest models,
// loads that would not fit beside the old gpu-lets (memory, MIG memory
// slots) counting extra, and among equal choices keeps next's own order. A
// layout moves only to a GPU with the memory it needs.
//
// next's GPUs must be gpus, in order (the planner's Plan.GPUs); otherwise,
// or with no prev, Align returns next itself. It returns a new plan and
// leaves next as it was.
func Align(prev, next *Plan, gpus []GPU) *Plan {
	if prev == nil || next == nil || len(next.GPUs) != len(gpus) {
		return next
	}
	for i := range gpus {
		if next.GPUs[i].ID != gpus[i].ID {
			return next
		}
	}
	running := letsByGPU(prev)
	order := make([]int, len(gpus)) // order[i]: the layout of next's GPU i on GPU i
	for i := range order {
		order[i] = i
	}
	for _, class := range alikeGPUs(gpus) {
		cost := make([][]int64, len(class))
		for r, from := range class {
			cost[r] = make([]int64, len(class))
			for c, to := range class {
				cost[r][c] = alignCost(next.GPUs[from].GPULets, running[gpus[to].ID], gpus[to])
				if cost[r][c] < alignNoFit {
					cost[r][c] *= int64(len(class) + 1)
				}
				// Ties keep next's order: a layout off its own GPU costs a
				// fraction of a load more.
				if r != c {
					cost[r][c]++
				}
			}
		}
		for r, c := range cheapestAssignment(cost) {
			order[class[c]] = class[r]
		}
	}
	if slices.IsSorted(order) {
		return next
	}
	out := *next
	out.GPUs = make([]GPUPlan, len(next.GPUs))
	for i, from := range order {
		out.GPUs[i] = next.GPUs[from] // its layout and the memory that uses
		out.GPUs[i].ID, out.GPUs[i].MemoryMB = next.GPUs[i].ID, next.GPUs[i].MemoryMB
		out.GPUs[i].GPULets = slices.Clone(next.GPUs[from].GPULets)
	}
	return &out
}

// letsByGPU is each GPU's gpu-lets in p, by GPU id (none for a nil p).
func letsByGPU(p *Plan) map[string][]GPULet {
	m := map[string][]GPULet{}
	if p != nil {
		for _, g := range p.GPUs {
			m[g.ID] = g.GPULets
		}
	}
	return m
}

// alikeGPUs groups the indices of gpus whose layouts may trade places: the
// same type (so the same profiles), backend, sizes, gpu-let cap and MIG
// table. Groups of one are left out.
func alikeGPUs(gpus []GPU) [][]int {
	var keys []string
	groups := map[string][]int{}
	for i, g := range gpus {
		k := fmt.Sprintf("%s\x00%s\x00%v\x00%d\x00%s", g.Type, g.Backend, g.Sizes, g.MaxGPULets, g.MIGModel)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	var out [][]int
	for _, k := range keys {
		if len(groups[k]) > 1 {
			out = append(out, groups[k])
		}
	}
	return out
}

// alignCost is what moving gpu from old (what runs on it) to layout costs,
// in model loads: each executor started or resized, each model it or a kept
// gpu-let loads, and alignCrowdCost per load when they do not fit beside the
// old gpu-lets (crowded). alignNoFit when the layout itself needs more
// memory than the GPU has.
func alignCost(layout, old []GPULet, gpu GPU) int64 {
	if gpu.MemoryMB > 0 && letsMemoryMB(layout) > gpu.MemoryMB {
		return alignNoFit
	}
	m := moveOnto(layout, old)
	if m.loads > 0 && crowded(gpu, old, m.started, m.loadedMB) {
		return m.loads + alignCrowdCost*m.loads
	}
	return m.loads
}

// move is what moving a GPU from what runs on it to a layout takes: the
// gpu-lets it starts (or resizes), the model loads (each executor started
// counting alignStartCost more) and the memory the loads hold.
type move struct {
	started  []GPULet
	loads    int64
	loadedMB float64
}

// moveOnto is the move from old (what runs on a GPU) to layout.
func moveOnto(layout, old []GPULet) move {
	var m move
	d := Diff(&Plan{GPUs: []GPUPlan{{GPULets: old}}}, &Plan{GPUs: []GPUPlan{{GPULets: layout}}})
	for _, c := range d.Changes {
		switch c.Action {
		case ActionStart, ActionResize:
			m.loads += alignStartCost + int64(len(c.New.Models))
			m.started = append(m.started, *c.New)
			m.loadedMB += letsMemoryMB([]GPULet{*c.New})
		case ActionKeep:
			m.loads += int64(len(c.Load))
			for _, name := range c.Load {
				m.loadedMB += c.New.Placement(name).HeldMB()
			}
		}
	}
	return m
}

// Crowded lists the GPUs of gpus (by ID, in their order) where what moving
// from prev (what runs) to next starts and loads does not fit beside what
// runs there: memory beyond what the old gpu-lets leave, or a MIG instance
// on memory slots an old one holds. A node starts and loads those after the
// old gpu-lets have drained, and the models only the old ones serve there
// have no route meanwhile.
func Crowded(prev, next *Plan, gpus []GPU) []string {
	if next == nil {
		return nil
	}
	running, planned := letsByGPU(prev), letsByGPU(next)
	var out []string
	for _, g := range gpus {
		old := running[g.ID]
		if len(old) == 0 {
			continue
		}
		if m := moveOnto(planned[g.ID], old); m.loads > 0 && crowded(g, old, m.started, m.loadedMB) {
			out = append(out, g.ID)
		}
	}
	return out
}

// crowded says whether what a re-plan adds to gpu does not fit beside old,
// whose gpu-lets hold their room until they drain: on MIG a started
// instance on memory slots an old one holds, elsewhere the memory of the
// loads (loadedMB) beyond what the old gpu-lets leave (not known without
// the GPU's memory).
func crowded(gpu GPU, old, started []GPULet, loadedMB float64) bool {
	if gpu.Backend == BackendMIG {
		name := gpu.MIGModel
		if name == "" {
			name = gpu.Type
		}
		table, err := migrules.Lookup(name)
		if err != nil {
			return false
		}
		held := uint64(0)
		for _, l := range old {
			held |= migSlots(table, l)
		}
		for _, l := range started {
			if migSlots(table, l)&held != 0 {
				return true
			}
		}
		return false
	}
	return gpu.MemoryMB > 0 && letsMemoryMB(old)+loadedMB > gpu.MemoryMB
}

// migSlots is the set of memory slots l's MIG instance occupies (none when
// the table does not know its profile).
func migSlots(table migrules.GPU, l GPULet) uint64 {
	p, err := table.Profile(l.MIGProfile)
	if err != nil {
		return 0
	}
	return migrules.Placement{Profile: l.MIGProfile, Start: l.MIGStart, Size: p.Size}.Slots()
}

// letsMemoryMB is what the gpu-lets' models hold on the GPU.
func letsMemoryMB(lets []GPULet) float64 {
	var mb float64
	for _, l := range lets {
		for _, m := range l.Models {
			mb += m.HeldMB()
		}
	}
	return mb
}

// cheapestAssignment solves the square assignment problem: it returns, for
// each row r, the column of cost[r] it takes, every column taken once, at
// the least total cost (the Hungarian method with potentials, O(n³)).
func cheapestAssignment(cost [][]int64) []int {
	n := len(cost)
	// 1-based: row 0 and column 0 are the method's sentinels.
	u, v := make([]int64, n+1), make([]int64, n+1)
	rowOf := make([]int, n+1) // rowOf[c]: the row column c is taken by, 0 none
	way := make([]int, n+1)
	for r := 1; r <= n; r++ {
		rowOf[0] = r
		c0 := 0
		minv := make([]int64, n+1)
		for c := range minv {
			minv[c] = math.MaxInt64
		}
		used := make([]bool, n+1)
		for rowOf[c0] != 0 {
			used[c0] = true
			r0, delta, c1 := rowOf[c0], int64(math.MaxInt64), 0
			for c := 1; c <= n; c++ {
				if used[c] {
					continue
				}
				if cur := cost[r0-1][c-1] - u[r0] - v[c]; cur < minv[c] {
					minv[c], way[c] = cur, c0
				}
				if minv[c] < delta {
					delta, c1 = minv[c], c
				}
			}
			for c := 0; c <= n; c++ {
				if used[c] {
					u[rowOf[c]] += delta
					v[c] -= delta
				} else {
					minv[c] -= delta
				}
			}
			c0 = c1
		}
		for c0 != 0 {
			c1 := way[c0]
			rowOf[c0] = rowOf[c1]
			c0 = c1
		}
	}
	out := make([]int, n)
	for c := 1; c <= n; c++ {
		out[rowOf[c]-1] = c - 1
	}
	return out
}
