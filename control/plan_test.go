package control

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gpulet/gpuletd/gpulet"
)

func TestPlanHeadroom(t *testing.T) {
	// ℓ(b) = b ms on one whole GPU with a 20 ms SLO: batches of 10 every
	// 10 ms, 1000 req/s at most.
	prof, err := gpulet.NewProfile("m", "t", 100, wholeGPUPoints())
	require.NoError(t, err)
	for _, tc := range []struct {
		name                 string
		estimate             float64
		planned, unscheduled float64
	}{
		{"the full headroom fits", 500, 600, 0},
		{"less headroom, everything placed", 900, 990, 0},
		{"overloaded: the full headroom's plan", 1100, 1000, 320},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := gpulet.Input{
				GPUs:    []gpulet.GPU{{ID: "g0", Type: "t", MemoryMB: 1000, Backend: gpulet.BackendNone}},
				Demands: []gpulet.Demand{{Name: "m", Profile: prof, SLOMS: 20, Rate: tc.estimate}},
			}
			p, err := Plan(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{}, Room{Base: Headroom})
			require.NoError(t, err)
			require.InDelta(t, tc.planned, p.Assigned()["m"], 1e-6*tc.planned)
			require.InDelta(t, tc.unscheduled, p.UnscheduledRate(), 1e-6*tc.planned)
		})
	}
}

// TestPlanOverloadSharesFairly: one model's flood on a node that cannot
// carry it leaves the others all of their demand (the planner alone, given
// the flood, keeps no place for them); the flood gets what is left and the
// rest of it is reported held back.
func TestPlanOverloadSharesFairly(t *testing.T) {
	prof := wholeGPUProfiles(t) // 1000 req/s at most with a 20 ms SLO
	in := gpulet.Input{
		GPUs: []gpulet.GPU{{ID: "g0", Type: "t", MemoryMB: 1000, Backend: gpulet.BackendNone}},
		Demands: []gpulet.Demand{
			{Name: "flood", Profile: prof("flood"), SLOMS: 20, Rate: 4000},
			{Name: "a", Profile: prof("a"), SLOMS: 20, Rate: 50},
			{Name: "b", Profile: prof("b"), SLOMS: 20, Rate: 20},
		},
	}
	alone, err := gpulet.Run(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{})
	require.NoError(t, err)
	require.True(t, alone.Assigned()["a"] < 50 || alone.Assigned()["b"] < 20,
		"the case needs a planner that, given the flood, crowds the others out: %v", alone.Assigned())

	p, err := Plan(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{}, Room{Base: Headroom})
	require.NoError(t, err)
	got := p.Assigned()
	require.InDelta(t, 50, got["a"], 1e-9, "a model under its fair share gets all of its demand")
	require.InDelta(t, 20, got["b"], 1e-9)
	require.Greater(t, got["flood"], 600.0, "the flood gets what the others leave")
	require.NotContains(t, p.Unscheduled, "a")
	require.NotContains(t, p.Unscheduled, "b")
	require.InDelta(t, 4000-got["flood"], p.Unscheduled["flood"], 4)
	require.Contains(t, p.Reasons["flood"], "fair share")
	require.False(t, p.Schedulable, "a plan that holds demand back is not schedulable")
}

// TestPlanOverloadBelowEveryDemand: when even the lowest demand cannot be
// given to every model (here each asks more than a third of the node), the
// fair share falls below it and every model keeps a place with an equal
// share, rather than the plan of the full demands, which places the first
// models whole and leaves the rest out.
func TestPlanOverloadBelowEveryDemand(t *testing.T) {
	prof := wholeGPUProfiles(t) // 1000 req/s at most with a 20 ms SLO
	in := gpulet.Input{
		GPUs: []gpulet.GPU{{ID: "g0", Type: "t", MemoryMB: 1000, Backend: gpulet.BackendNone}},
		Demands: []gpulet.Demand{
			{Name: "flood", Profile: prof("flood"), SLOMS: 20, Rate: 4000},
			{Name: "a", Profile: prof("a"), SLOMS: 20, Rate: 600},
			{Name: "b", Profile: prof("b"), SLOMS: 20, Rate: 700},
		},
	}
	alone, err := gpulet.Run(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{})
	require.NoError(t, err)
	require.True(t, alone.Assigned()["a"] == 0 || alone.Assigned()["b"] == 0,
		"the case needs a planner that, given the full demands, leaves a model out: %v", alone.Assigned())

	p, err := Plan(context.Background(), gpulet.AlgoSBP, in, gpulet.Options{}, Room{Base: Headroom})
	require.NoError(t, err)
	got := p.Assigned()
	for _, name := range []string{"flood", "a", "b"} {
		require.Greater(t, got[name], 300.0, "%s keeps a place with about a third of the node: %v", name, got)
		require.InDelta(t, got["a"], got[name], 1, "every model gets the same share: %v", got)
		require.Contains(t, p.Reasons[name], "fair share")
	}
	require.InDelta(t, 600-got["a"], p.Unscheduled["a"], 1e-6)
	require.InDelta(t, 4000-got["flood"], p.Unscheduled["flood"], 1e-6)
	require.False(t, p.Schedulable)
}

// TestPlanOverloadSharesDeviceTime is make run's demo node flooded on every
// model: two small models of about 57 000 req/s per device and a long one
// of about 61. The fair share is time on the device: the small models keep
// thousands of requests per second each, the long one a place of its own
// and its share. Held to one rate for all, the long model's 61 req/s at
// most held the small ones to less than that (46.8 req/s each, seen on
// the demo under `gpuletd load --rate 8000`).
func TestPlanOverloadSharesDeviceTime(t *testing.T) {
	smallProf, longProf := demoProfiles(t)
	in := gpulet.Input{
		GPUs: []gpulet.GPU{twoCoreCPU("cpu")},
		Demands: []gpulet.Demand{
			{Name: "small", Profile: smallProf, SLOMS: 5, Rate: 40000},
			{Name: "small2", Profile: smallProf, SLOMS: 5, Rate: 40000},
			{Name: "long", Profile: longProf, SLOMS: 500, Rate: 100},
		},
	}
	require.InDelta(t, 60.6, deviceRate(in.Demands[2]), 0.1, "batches of 7 in 231 ms on one core, twice over")
	require.Greater(t, deviceRate(in.Demands[0]), 50000.0)

	p, err := Plan(context.Background(), gpulet.AlgoGpuletInt, in, gpulet.Options{}, Room{Base: Headroom})
	require.NoError(t, err)
	got := p.Assigned()
	for _, name := range []string{"small", "small2"} {
		require.Greater(t, got[name], 5000.0, "%s keeps thousands of req/s: %v", name, got)
		require.Contains(t, p.Reasons[name], "fair share")
	}
	require.GreaterOrEqual(t, got["long"], MinPlanRate, "the long model keeps a place: %v", got)
	require.InDelta(t, 100-got["long"], p.Unscheduled["long"], 1e-6)
	require.Regexp(t, `its fair share is [\d.]+ req/s, what \d+% of one device's time serves of it`, p.Reasons["long"])
	// The same share of the device: each model's rate over its device rate.
	share := got["long"] / deviceRate(in.Demands[2])
	require.InDelta(t, share, got["small"]/deviceRate(in.Demands[0]), 0.02, "%v", got)
}

// TestPlanHeadroomWithSplitResidues is make run's demo node: a small model
// with a 5 ms SLO that serves slightly more per core on both cores of a
// CPU device, and a model whose batches take 18–33 ms, which cannot share
// its duty cycle. Only elastic partitioning's second pass (residues split
// off MPS devices) places both; the headroom is then sized with it too,
// instead of falling to none.
func TestPlanHeadroomWithSplitResidues(t *testing.T) {
	smallProf, longProf := demoProfiles(t)
	in := gpulet.Input{
		GPUs: []gpulet.GPU{twoCoreCPU("cpu")},
		Demands: []gpulet.Demand{
			{Name: "small", Profile: smallProf, SLOMS: 5, Rate: 12},
			{Name: "long", Profile: longProf, SLOMS: 500, Rate: 1.2},
		},
	}
	first, err := gpulet.Run(context.Background(), gpulet.AlgoGpuletInt, in, gpulet.Options{WholeResidues: true})
	require.NoError(t, err)
	require.Contains(t, first.Unscheduled, "long", "the first pass alone leaves it out")
	p, err := Plan(context.Background(), gpulet.AlgoGpuletInt, in, gpulet.Options{}, Room{Base: Headroom})
	require.NoError(t, err)
	require.Empty(t, p.Unscheduled)
	for _, d := range in.Demands {
		require.InDelta(t, PlanRate(d.Rate, Headroom), p.Assigned()[d.Name], 1e-6, d.Name)
	}
}

// A model no gpu-let can hold (more memory than the device has) does not
// make the node look overloaded: the others are planned as without it, the
// long model beside the small one on a split CPU device, and it is reported
// unscheduled with its reason. Before, the node went to the fair share with
// the first pass alone, which left the long model out as well.
func TestPlanPlacesTheOthersBesideAnUnplaceableModel(t *testing.T) {
	in := withUnplaceableModel(t, 12, 1.2, 1)
	for _, algo := range []gpulet.Algo{gpulet.AlgoGpuletInt, gpulet.AlgoGpulet} {
		p, err := Plan(context.Background(), algo, in, gpulet.Options{}, Room{Base: Headroom})
		require.NoError(t, err)
		require.Equal(t, []string{"huge"}, p.Unplaceable, algo)
		require.Equal(t, map[string]float64{"huge": PlanRate(1, Headroom)}, p.Unscheduled, algo)
		require.Contains(t, p.Reasons["huge"], "memory", algo)
		require.False(t, p.Schedulable)
		for _, d := range in.Demands[:2] {
			require.InDelta(t, PlanRate(d.Rate, Headroom), p.Assigned()[d.Name], 1e-6, d.Name)
		}
	}
	// Every model unplaceable: the plan says so, placing nothing.
	in.Demands = in.Demands[2:]
	p, err := Plan(context.Background(), gpulet.AlgoGpuletInt, in, gpulet.Options{}, Room{Base: Headroom})
	require.NoError(t, err)
	require.Equal(t, []string{"huge"}, p.Unplaceable)
	require.Empty(t, p.Assigned())
}

// TestPlanHeadroomKeepsResiduesWhole: where the estimates fit with every
// residue on a whole GPU, room to grow is not bought with a residue split
// off an MPS GPU, whose size would then follow every rate change. Two
// two-core CPU devices: the small model's 0.9 of a device fits on one,
// the long model takes the other; with the full headroom the small one's
// residue would have to share the second device.
func TestPlanHeadroomKeepsResiduesWhole(t *testing.T) {
	smallProf, longProf := demoProfiles(t)
	in := gpulet.Input{
		GPUs: []gpulet.GPU{twoCoreCPU("cpu0"), twoCoreCPU("cpu1")},
		Demands: []gpulet.Demand{
			{Name: "small", Profile: smallProf, SLOMS: 5, Rate: 0.9 * 57142}, // 57 142 req/s: one device's capacity
			{Name: "long", Profile: longProf, SLOMS: 500, Rate: 1.2},
		},
	}
	split, err := gpulet.Run(context.Background(), gpulet.AlgoGpuletInt, withRates(in, func(_ int, r float64) float64 { return PlanRate(r, Headroom) }), gpulet.Options{})
	require.NoError(t, err)
	require.Empty(t, split.Unscheduled, "the full headroom fits with a residue split off")
	p, err := Plan(context.Background(), gpulet.AlgoGpuletInt, in, gpulet.Options{}, Room{Base: Headroom})
	require.NoError(t, err)
	require.Empty(t, p.Unscheduled)
	for _, g := range p.GPUs {
		for _, l := range g.GPULets {
			for _, m := range l.Models {
				if m.Name == "small" {
					require.Equal(t, 100, l.Size, "%s: %v", g.ID, l.Models)
				}
			}
		}
	}
	require.Greater(t, p.Assigned()["small"], in.Demands[0].Rate, "some headroom")
}

// withUnplaceableModel is a two-core CPU device with the demo models small
// and long and a model huge whose memory no gpu-let has, at these rates.
func withUnplaceableModel(t *testing.T, small, long, huge float64) gpulet.Input {
	t.Helper()
	smallProf, longProf := demoProfiles(t)
	hugeProf := *longProf
	hugeProf.Model, hugeProf.MemoryMB = "huge", 1e9
	return gpulet.Input{
		GPUs: []gpulet.GPU{twoCoreCPU("cpu")},
		Demands: []gpulet.Demand{
			{Name: "small", Profile: smallProf, SLOMS: 5, Rate: small},
			{Name: "long", Profile: longProf, SLOMS: 500, Rate: long},
			{Name: "huge", Profile: &hugeProf, SLOMS: 500, Rate: huge},
		},
	}
}

// demoProfiles are make run's demo models as the planner sees them on a
// two-core CPU device: a small model with a 5 ms SLO in mind that serves
// slightly more per core on both cores, and a long one whose batches take
// 18–33 ms.
func demoProfiles(t *testing.T) (small, long *gpulet.Profile) {
	t.Helper()
	var sp, lp []gpulet.Point
	for b := 1; b <= 32; b *= 2 {
		sp = append(sp,
			gpulet.Point{Batch: b, Size: 50, P50MS: 0.10 + 0.032*float64(b)},
			gpulet.Point{Batch: b, Size: 100, P50MS: 0.08 + 0.015*float64(b)})
		lp = append(lp,
			gpulet.Point{Batch: b, Size: 50, P50MS: 33 * float64(b)},
			gpulet.Point{Batch: b, Size: 100, P50MS: 18 * float64(b)})
	}
	small, err := gpulet.NewProfile("small", "cpu", 256, sp)
	require.NoError(t, err)
	long, err = gpulet.NewProfile("long", "cpu", 256, lp)
	require.NoError(t, err)
	return small, long
}

// twoCoreCPU is a CPU device of two cores: gpu-lets of 50% and 100%.
func twoCoreCPU(id string) gpulet.GPU {
	return gpulet.GPU{ID: id, Type: "cpu", MemoryMB: 16384, Backend: gpulet.BackendMPS, Sizes: []int{50, 100}}
}

// wholeGPUProfiles makes profiles of ℓ(b) = b ms on one whole GPU: with a 20
// ms SLO, batches of 10 every 10 ms, 1000 req/s at most.
func wholeGPUProfiles(t *testing.T) func(name string) *gpulet.Profile {
	pts := wholeGPUPoints()
	return func(name string) *gpulet.Profile {
		p, err := gpulet.NewProfile(name, "t", 100, pts)
		require.NoError(t, err)
		return p
	}
}

// wholeGPUPoints is ℓ(b) = b ms on one whole GPU, batches 1 to 32.
func wholeGPUPoints() []gpulet.Point {
	var pts []gpulet.Point
	for b := 1; b <= 32; b++ {
		pts = append(pts, gpulet.Point{Batch: b, Size: 100, P50MS: float64(b)})
	}
	return pts
}
