package gpulet

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet/migrules"
)

// memPl is a placement holding mb of GPU memory.
func memPl(name string, mb float64) Placement {
	return Placement{Name: name, Batch: 4, Rate: 10, MemoryMB: mb}
}

// layoutOf is a plan of gpus, in order, with the given gpu-lets on each.
func layoutOf(gpus []GPU, lets ...[]GPULet) *Plan {
	p := &Plan{Algo: AlgoGpulet, Schedulable: true}
	for i, g := range gpus {
		p.GPUs = append(p.GPUs, GPUPlan{ID: g.ID, Type: g.Type, Backend: g.Backend, MemoryMB: g.MemoryMB, GPULets: lets[i]})
	}
	return p
}

// models lists each GPU's models of p by id, gpu-let by gpu-let.
func modelsByGPU(p *Plan) map[string][]string {
	out := map[string][]string{}
	for _, g := range p.GPUs {
		for _, l := range g.GPULets {
			for _, m := range l.Models {
				out[g.ID] = append(out[g.ID], m.Name)
			}
		}
	}
	return out
}

func TestAlign(t *testing.T) {
	v100 := []GPU{mpsGPU("g0", "v100", 3000), mpsGPU("g1", "v100", 3000), mpsGPU("g2", "v100", 3000)}
	mixed := []GPU{mpsGPU("g0", "v100", 3000), mpsGPU("g1", "a100", 3000)}
	small := []GPU{mpsGPU("g0", "v100", 3000), mpsGPU("g1", "v100", 1000)}
	roomy := []GPU{mpsGPU("g0", "v100", 3000), mpsGPU("g1", "v100", 4000)}
	a100 := func(id string) GPU {
		return GPU{ID: id, Type: "a100", MemoryMB: 40960, Backend: BackendMIG, MIGModel: migrules.A100_40GB}
	}
	mig := []GPU{a100("g0"), a100("g1")}
	inst := func(profile string, start int, models ...Placement) GPULet {
		return GPULet{Size: 100, MIGProfile: profile, MIGStart: start, Models: models}
	}
	a, b, c := memPl("a", 500), memPl("b", 500), memPl("c", 500)
	big, other := memPl("big", 2000), memPl("other", 1500)
	for _, tc := range []struct {
		name       string
		gpus       []GPU
		prev, next *Plan
		want       map[string][]string
	}{{
		// The planner laid the same GPUs out in another order: each
		// layout goes back where it runs, and nothing starts or loads.
		name: "layouts go back where they run",
		gpus: v100,
		prev: layoutOf(v100, []GPULet{let(100, a)}, []GPULet{let(60, b), let(40, c)}, nil),
		next: layoutOf(v100, []GPULet{let(60, b), let(40, c)}, nil, []GPULet{let(100, a)}),
		want: map[string][]string{"g0": {"a"}, "g1": {"b", "c"}},
	}, {
		// A layout that changes stays beside the most of what runs.
		name: "a changed layout goes where most of it runs",
		gpus: v100,
		prev: layoutOf(v100, []GPULet{let(100, a)}, []GPULet{let(100, b, c)}, nil),
		next: layoutOf(v100, []GPULet{let(50, b), let(50, c)}, []GPULet{let(100, a)}, nil),
		want: map[string][]string{"g0": {"a"}, "g1": {"b", "c"}},
	}, {
		name: "GPUs of another type keep their layouts",
		gpus: mixed,
		prev: layoutOf(mixed, []GPULet{let(100, a)}, []GPULet{let(100, b)}),
		next: layoutOf(mixed, []GPULet{let(100, b)}, []GPULet{let(100, a)}),
		want: map[string][]string{"g0": {"b"}, "g1": {"a"}},
	}, {
		name: "equal costs keep the planner's order",
		gpus: v100,
		prev: layoutOf(v100, nil, nil, []GPULet{let(100, c)}),
		next: layoutOf(v100, []GPULet{let(100, a)}, []GPULet{let(100, b)}, []GPULet{let(100, c)}),
		want: map[string][]string{"g0": {"a"}, "g1": {"b"}, "g2": {"c"}},
	}, {
		// g1 has 1 000 MB: big's layout cannot go there, even where a
		// already runs.
		name: "a layout goes only where its memory fits",
		gpus: small,
		prev: layoutOf(small, []GPULet{let(100, a)}, []GPULet{let(100, b)}),
		next: layoutOf(small, []GPULet{let(100, big)}, []GPULet{let(100, a)}),
		want: map[string][]string{"g0": {"big"}, "g1": {"a"}},
	}, {
		// big holds 2 000 of g0's 3 000 MB until it drains: other (1 500)
		// would wait for that there, and a (500) loads beside it.
		name: "a load goes where it fits beside what runs",
		gpus: v100[:2],
		prev: layoutOf(v100[:2], []GPULet{let(100, big)}, nil),
		next: layoutOf(v100[:2], []GPULet{let(100, other)}, []GPULet{let(100, a)}),
		want: map[string][]string{"g0": {"a"}, "g1": {"other"}},
	}, {
		// Each GPU keeps its own memory in the plan, whichever layout it
		// takes.
		name: "GPUs of other memory trade layouts that fit both",
		gpus: roomy,
		prev: layoutOf(roomy, []GPULet{let(100, b)}, []GPULet{let(100, a)}),
		next: layoutOf(roomy, []GPULet{let(100, a)}, []GPULet{let(100, b)}),
		want: map[string][]string{"g0": {"b"}, "g1": {"a"}},
	}, {
		// p holds memory slot 0 of g0 and q slot 6 of g1 until they drain:
		// a's 4g instance (slots 0–3) starts beside q at once, b's 3g one
		// (slots 4–7) beside p.
		name: "a MIG instance starts where its slots are free",
		gpus: mig,
		prev: layoutOf(mig, []GPULet{inst("1g.5gb", 0, memPl("p", 500))}, []GPULet{inst("1g.5gb", 6, memPl("q", 500))}),
		next: layoutOf(mig, []GPULet{inst("4g.20gb", 0, a)}, []GPULet{inst("3g.20gb", 4, b)}),
		want: map[string][]string{"g0": {"b"}, "g1": {"a"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := modelsByGPU(tc.next)
			got := Align(tc.prev, tc.next, tc.gpus)
			require.Equal(t, tc.want, modelsByGPU(got))
			require.Equal(t, before, modelsByGPU(tc.next), "next is left as it was")
			for i, g := range got.GPUs {
				require.Equal(t, tc.gpus[i].ID, g.ID, "the plan's GPUs stay in the input's order")
				require.Equal(t, tc.gpus[i].MemoryMB, g.MemoryMB)
			}
			require.Equal(t, tc.next.Schedulable, got.Schedulable)
		})
	}
}

func TestAlignLeavesAPlanItCannotPair(t *testing.T) {
	gpus := []GPU{mpsGPU("g0", "v100", 3000), mpsGPU("g1", "v100", 3000)}
	next := layoutOf(gpus, []GPULet{let(100, pl("a", 1, 1))}, nil)
	require.Same(t, next, Align(nil, next, gpus), "nothing runs")
	require.Same(t, next, Align(next, next, gpus), "already where it runs")
	require.Same(t, next, Align(layoutOf(gpus, nil, nil), next, gpus[:1]), "GPUs not the plan's")
	require.Same(t, next, Align(layoutOf(gpus, nil, nil), next, []GPU{gpus[1], gpus[0]}), "GPUs in another order")
	require.Nil(t, Align(next, nil, gpus))
}

// cheapestAssignment's total is the least over every permutation.
func TestCheapestAssignment(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 6; n++ {
		for range 50 {
			cost := make([][]int64, n)
			for r := range cost {
				cost[r] = make([]int64, n)
				for c := range cost[r] {
					cost[r][c] = rng.Int64N(20)
					if rng.IntN(8) == 0 {
						cost[r][c] = alignNoFit
					}
				}
			}
			got := cheapestAssignment(cost)
			seen := map[int]bool{}
			var total int64
			for r, c := range got {
				require.False(t, seen[c], "column %d taken twice", c)
				seen[c] = true
				total += cost[r][c]
			}
			require.Equal(t, leastTotal(cost), total, "%v", cost)
		}
	}
}

// leastTotal is the least total of an assignment, by trying them all.
func leastTotal(cost [][]int64) int64 {
	n := len(cost)
	best := int64(-1)
	perm := make([]int, n)
	used := make([]bool, n)
	var try func(r int, sum int64)
	try = func(r int, sum int64) {
		if r == n {
			if best < 0 || sum < best {
				best = sum
			}
			return
		}
		for c := range n {
			if !used[c] {
				used[c], perm[r] = true, c
				try(r+1, sum+cost[r][c])
				used[c] = false
			}
		}
	}
	try(0, 0)
	return best
}

// On random nodes Align only trades layouts between alike GPUs, keeps the
// GPUs in the input's order, and never costs more than the planner's order.
func TestAlignOnRandomNodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	types := []string{"v100", "a100"}
	layoutKey := func(g GPUPlan) string {
		var k []string
		for _, l := range g.GPULets {
			k = append(k, fmt.Sprint(l.Size, modelKey(l)))
		}
		return fmt.Sprint(k)
	}
	randomLayout := func() []GPULet {
		var lets []GPULet
		for range rng.IntN(3) {
			var ms []Placement
			for range 1 + rng.IntN(2) {
				ms = append(ms, memPl(string(rune('a'+rng.IntN(6))), float64(100*(1+rng.IntN(8)))))
			}
			lets = append(lets, let([]int{20, 40, 50, 100}[rng.IntN(4)], ms...))
		}
		return lets
	}
	for range 300 {
		n := 1 + rng.IntN(6)
		gpus := make([]GPU, n)
		prevLets, nextLets := make([][]GPULet, n), make([][]GPULet, n)
		for i := range gpus {
			gpus[i] = mpsGPU(fmt.Sprintf("g%d", i), types[rng.IntN(2)], float64(1000*(1+rng.IntN(3))))
			prevLets[i], nextLets[i] = randomLayout(), randomLayout()
		}
		prev, next := layoutOf(gpus, prevLets...), layoutOf(gpus, nextLets...)
		got := Align(prev, next, gpus)
		total := func(p *Plan) int64 {
			var c int64
			for i, g := range p.GPUs {
				c += alignCost(g.GPULets, prev.GPUs[i].GPULets, gpus[i])
			}
			return c
		}
		require.LessOrEqual(t, total(got), total(next))
		var from, to []string
		for i, g := range got.GPUs {
			require.Equal(t, gpus[i].ID, g.ID)
			require.Equal(t, gpus[i].MemoryMB, g.MemoryMB)
			from = append(from, gpus[i].Type+layoutKey(next.GPUs[i]))
			to = append(to, gpus[i].Type+layoutKey(g))
		}
		slices.Sort(from)
		slices.Sort(to)
		require.Equal(t, from, to, "the same layouts, each on a GPU of its own type")
	}
}

// Crowded names the GPUs whose starts and loads do not fit beside what
// runs there: memory the old gpu-lets hold until they drain, or MIG slots
// an old instance holds.
func TestCrowded(t *testing.T) {
	v100 := []GPU{mpsGPU("g0", "v100", 3000), mpsGPU("g1", "v100", 3000)}
	a100 := []GPU{{ID: "g0", Type: "a100", MemoryMB: 40960, Backend: BackendMIG, MIGModel: migrules.A100_40GB}}
	inst := func(profile string, start int, models ...Placement) GPULet {
		return GPULet{Size: 100, MIGProfile: profile, MIGStart: start, Models: models}
	}
	a, big, other := memPl("a", 500), memPl("big", 2000), memPl("other", 1500)
	for _, tc := range []struct {
		name       string
		gpus       []GPU
		prev, next *Plan
		want       []string
	}{
		{"nothing runs", v100, nil, layoutOf(v100, []GPULet{let(100, big)}, []GPULet{let(100, other)}), nil},
		{"nothing changes", v100, layoutOf(v100, []GPULet{let(100, big)}, nil), layoutOf(v100, []GPULet{let(100, big)}, nil), nil},
		// big holds 2 000 of g0's 3 000 MB until it drains.
		{"a start beside what runs", v100, layoutOf(v100, []GPULet{let(60, big)}, nil),
			layoutOf(v100, []GPULet{let(60, big), let(40, a)}, nil), nil},
		// A resize loads a second copy of big beside the first.
		{"a resize that does not fit beside the old size", v100, layoutOf(v100, []GPULet{let(100, big)}, nil),
			layoutOf(v100, []GPULet{let(50, big), let(50, a)}, nil), []string{"g0"}},
		{"a start that does not fit beside it", v100, layoutOf(v100, []GPULet{let(100, big)}, []GPULet{let(100, a)}),
			layoutOf(v100, []GPULet{let(100, other)}, []GPULet{let(100, a)}), []string{"g0"}},
		{"a load that does not fit on a kept gpu-let", v100, layoutOf(v100, []GPULet{let(100, big)}, []GPULet{let(100, a)}),
			layoutOf(v100, []GPULet{let(100, big, other)}, []GPULet{let(100, a)}), []string{"g0"}},
		{"a MIG instance on slots an old one holds", a100, layoutOf(a100, []GPULet{inst("3g.20gb", 0, a)}),
			layoutOf(a100, []GPULet{inst("4g.20gb", 0, a)}), []string{"g0"}},
		{"a MIG instance on free slots", a100, layoutOf(a100, []GPULet{inst("3g.20gb", 4, a)}),
			layoutOf(a100, []GPULet{inst("3g.20gb", 4, a), inst("2g.10gb", 0, other)}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, Crowded(tc.prev, tc.next, tc.gpus)) })
	}
}
