package gpulet

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/gpulet/gpuletd/gpulet/migrules"
	"github.com/stretchr/testify/require"
)

func TestSingleModelBudget(t *testing.T) {
	// L(b,100) = 2 + b ms, SLO 20 ms: 2·L ≤ 20 gives b = 8 at 10 ms, so a
	// whole GPU serves 800 req/s with a 10 ms cycle and 20 ms worst case.
	p := linearProfile(t, "m", "dev", 100, 1, 2, 16, 100)
	tests := []struct {
		name   string
		gpus   int
		rate   float64
		sched  bool
		left   float64
		batch  int
		worst  float64
		nplace int
	}{
		{"exactly one GPU", 1, 800, true, 0, 8, 20, 1},
		{"just over one GPU", 1, 801, false, 1, 8, 20, 1},
		{"two GPUs", 2, 1600, true, 0, 8, 20, 2},
		{"light load, smaller batch", 1, 100, true, 0, 2, 0, 1},
	}
	for _, algo := range Algos() {
		for _, tc := range tests {
			t.Run(string(algo)+"/"+tc.name, func(t *testing.T) {
				in := Input{Demands: []Demand{{Name: "m", Profile: p, SLOMS: 20, Rate: tc.rate}}}
				for i := range tc.gpus {
					in.GPUs = append(in.GPUs, wholeGPU(string(rune('a'+i)), "dev", 1000))
				}
				plan := runPlan(t, algo, in, Options{})
				checkSelf(t, in, plan)
				require.Equal(t, tc.sched, plan.Schedulable)
				require.InDelta(t, tc.left, plan.Unscheduled["m"], 1e-6)
				if !tc.sched {
					require.Contains(t, plan.Reasons["m"], "left over")
				}
				pl := placements(plan, "m")
				require.Len(t, pl, tc.nplace)
				if tc.worst > 0 {
					require.Equal(t, tc.batch, pl[0].Batch)
					require.InDelta(t, tc.worst, pl[0].WorstMS, 1e-9)
				} else {
					// 100 req/s: ⌈0.1·D⌉ = 2 requests per cycle of up to
					// 20 ms (the cycle is as long as the SLO allows:
					// D + L(2) = D + 4 ≤ 20 and D ≤ 2/0.1 = 20 → D = 16).
					require.Equal(t, tc.batch, pl[0].Batch)
					require.InDelta(t, 20, pl[0].WorstMS, 1e-9)
				}
			})
		}
	}
}

func TestTemporalSharingDutyCycle(t *testing.T) {
	// Two models on one whole GPU share it in time: the cycle holds one
	// batch of each, and each model's worst case is the cycle plus its
	// batch.
	a := linearProfile(t, "a", "dev", 100, 1, 2, 16, 100)
	b := linearProfile(t, "b", "dev", 100, 2, 1, 16, 100)
	in := Input{GPUs: []GPU{wholeGPU("g", "dev", 1000)}, Demands: []Demand{
		{Name: "a", Profile: a, SLOMS: 30, Rate: 300},
		{Name: "b", Profile: b, SLOMS: 60, Rate: 150},
	}}
	for _, algo := range Algos() {
		t.Run(string(algo), func(t *testing.T) {
			plan := runPlan(t, algo, in, Options{})
			require.True(t, plan.Schedulable)
			checkSelf(t, in, plan)
			require.Len(t, plan.GPUs[0].GPULets, 1)
			l := plan.GPUs[0].GPULets[0]
			require.Len(t, l.Models, 2)
			busy := 0.0
			for _, m := range l.Models {
				busy += m.LatencyMS
				require.InDelta(t, l.DutyMS+m.LatencyMS, m.WorstMS, 1e-9)
				require.GreaterOrEqual(t, math.Ceil(m.Rate*l.DutyMS/1000-1e-9), float64(m.Batch))
			}
			require.LessOrEqual(t, busy, l.DutyMS+1e-9)
			require.InDelta(t, busy/l.DutyMS, l.Occupancy, 1e-9)
		})
	}
}

// splitWorkload makes gpulet split one MPS GPU: small gpu-lets serve more
// per percent.
func splitWorkload(t *testing.T) Input {
	a := sublinearProfile(t, "a", "dev", 100, 0.5, 1)
	b := sublinearProfile(t, "b", "dev", 100, 0.5, 1)
	return Input{GPUs: []GPU{mpsGPU("g", "dev", 1000)}, Demands: []Demand{
		{Name: "a", Profile: a, SLOMS: 24, Rate: 1500},
		{Name: "b", Profile: b, SLOMS: 24, Rate: 1500},
	}}
}

func TestInterferenceChecksBothSides(t *testing.T) {
	in := splitWorkload(t)
	plain := runPlan(t, AlgoGpulet, in, Options{})
	checkSelf(t, in, plain)
	require.Len(t, plain.GPUs[0].GPULets, 2, "gpulet splits the GPU")

	// b slows a down by half and is not slowed itself: a's gpu-let must
	// still meet a's SLO once b runs beside it, so gpulet-int gives b less
	// (or nothing) beside a.
	pred := pairPredictor{"a": 1.5}
	withInt := runPlan(t, AlgoGpuletInt, in, Options{Interference: pred})
	checkSelf(t, in, withInt)
	for _, l := range withInt.GPUs[0].GPULets {
		for _, m := range l.Models {
			if m.Name == "a" && len(withInt.GPUs[0].GPULets) == 2 {
				require.InDelta(t, 1.5, m.Factor, 1e-12, "a runs beside b")
			}
			if m.Name == "b" {
				require.InDelta(t, 1, m.Factor, 1e-12)
			}
		}
	}
	require.Less(t, withInt.Assigned()["a"]+withInt.Assigned()["b"], plain.Assigned()["a"]+plain.Assigned()["b"])

	// gpulet ignores any predictor it is given.
	again := runPlan(t, AlgoGpulet, in, Options{Interference: pred})
	require.Equal(t, plain, again)
}

func TestInterferenceMargin(t *testing.T) {
	in := splitWorkload(t)
	base := runPlan(t, AlgoGpuletInt, in, Options{Interference: constPredictor(1.1)})
	wide := runPlan(t, AlgoGpuletInt, in, Options{Interference: constPredictor(1.1), InterferenceMargin: 1})
	checkSelf(t, in, base)
	checkSelf(t, in, wide)
	for _, g := range wide.GPUs {
		if len(g.GPULets) == 2 {
			for _, l := range g.GPULets {
				for _, m := range l.Models {
					require.InDelta(t, 1.2, m.Factor, 1e-12, "1 + 0.1·(1+1)")
				}
			}
		}
	}
	_, err := Run(context.Background(), AlgoGpuletInt, in, Options{InterferenceMargin: -1})
	require.ErrorIs(t, err, ErrBadInput)
}

func TestMemoryNeverOverfilled(t *testing.T) {
	var ds []Demand
	for _, n := range []string{"a", "b", "c"} {
		ds = append(ds, Demand{Name: n, Profile: linearProfile(t, n, "dev", 400, 1, 2, 16), SLOMS: 50, Rate: 50})
	}
	in := Input{GPUs: []GPU{mpsGPU("g", "dev", 1000)}, Demands: ds}
	for _, algo := range Algos() {
		t.Run(string(algo), func(t *testing.T) {
			plan := runPlan(t, algo, in, Options{})
			checkSelf(t, in, plan)
			require.False(t, plan.Schedulable, "three 400 MB models do not fit 1000 MB")
			require.LessOrEqual(t, plan.GPUs[0].MemoryUsedMB, 1000.0)
			require.Len(t, plan.Unscheduled, 1)
		})
	}
}

func TestBadDemands(t *testing.T) {
	good := linearProfile(t, "m", "dev", 100, 1, 2, 16)
	other := linearProfile(t, "m", "other-gpu", 100, 1, 2, 16)
	huge := linearProfile(t, "m", "dev", 1e6, 1, 2, 16)
	tests := []struct {
		name   string
		d      Demand
		left   float64
		reason string
	}{
		{"no profile", Demand{Name: "x", SLOMS: 50, Rate: 10}, 10, "no latency profile"},
		{"profile of another GPU type", Demand{Name: "x", Profile: other, SLOMS: 50, Rate: 10}, 10, "GPU types"},
		{"SLO no batch meets", Demand{Name: "x", Profile: good, SLOMS: 5, Rate: 10}, 10, "no batch meets"},
		{"zero SLO", Demand{Name: "x", Profile: good, SLOMS: 0, Rate: 10}, 10, "SLO"},
		{"NaN SLO", Demand{Name: "x", Profile: good, SLOMS: math.NaN(), Rate: 10}, 10, "SLO"},
		{"negative rate", Demand{Name: "x", Profile: good, SLOMS: 50, Rate: -5}, 0, "rate"},
		{"NaN rate", Demand{Name: "x", Profile: good, SLOMS: 50, Rate: math.NaN()}, 0, "rate"},
		{"infinite rate", Demand{Name: "x", Profile: good, SLOMS: 50, Rate: math.Inf(1)}, 0, "rate"},
		{"too much memory", Demand{Name: "x", Profile: huge, SLOMS: 50, Rate: 10}, 10, "needs 1000000 MB of memory for one copy, more than any gpu-let has (dev: 16000 MB)"},
		{"negative memory", Demand{Name: "x", Profile: good, SLOMS: 50, Rate: 10, MemoryMB: -1}, 10, "memory"},
		{"rate beyond the node", Demand{Name: "x", Profile: good, SLOMS: 20, Rate: 1e6}, -1, "left over"},
		{"no name", Demand{Profile: good, SLOMS: 50, Rate: 10}, 10, "no model name"},
	}
	for _, algo := range Algos() {
		for _, tc := range tests {
			t.Run(string(algo)+"/"+tc.name, func(t *testing.T) {
				in := Input{GPUs: []GPU{mpsGPU("g0", "dev", 16000), mpsGPU("g1", "dev", 16000)}, Demands: []Demand{
					tc.d, {Name: "ok", Profile: good, SLOMS: 50, Rate: 100},
				}}
				plan := runPlan(t, algo, in, Options{Interference: constPredictor(1.1)})
				require.False(t, plan.Schedulable)
				name := tc.d.Name
				if name == "" {
					name = "#1"
				}
				left, ok := plan.Unscheduled[name]
				require.True(t, ok, "%v", plan.Unscheduled)
				if tc.left >= 0 {
					require.InDelta(t, tc.left, left, 1e-9)
				} else {
					require.Greater(t, left, 0.0)
				}
				require.Contains(t, plan.Reasons[name], tc.reason)
				if tc.left >= 0 {
					require.NotContains(t, plan.Unscheduled, "ok", "a good demand beside a bad one is planned")
				}
				_, err := json.Marshal(plan)
				require.NoError(t, err, "a plan always encodes (no NaN or Inf)")
			})
		}
	}
}

func TestZeroRateAndDuplicates(t *testing.T) {
	p := linearProfile(t, "m", "dev", 100, 1, 2, 16)
	in := Input{GPUs: []GPU{mpsGPU("g", "dev", 16000)}, Demands: []Demand{
		{Name: "idle", Profile: p, SLOMS: 50, Rate: 0},
		{Name: "m", Profile: p, SLOMS: 50, Rate: 100},
		{Name: "m", Profile: p, SLOMS: 50, Rate: 30},
	}}
	plan := runPlan(t, AlgoGpuletInt, in, Options{})
	require.Empty(t, placements(plan, "idle"))
	require.NotContains(t, plan.Unscheduled, "idle")
	require.InDelta(t, 30, plan.Unscheduled["m"], 1e-9)
	require.Contains(t, plan.Reasons["m"], "given twice")
	require.InDelta(t, 100, plan.Assigned()["m"], 1e-6)
}

func TestBadGPUs(t *testing.T) {
	p := linearProfile(t, "m", "dev", 100, 1, 2, 16)
	d := []Demand{{Name: "m", Profile: p, SLOMS: 50, Rate: 10}}
	tests := []struct {
		name string
		gpus []GPU
	}{
		{"none", nil},
		{"no id", []GPU{{Type: "dev", MemoryMB: 1}}},
		{"duplicate id", []GPU{mpsGPU("g", "dev", 1), mpsGPU("g", "dev", 1)}},
		{"no type", []GPU{{ID: "g", MemoryMB: 1}}},
		{"no memory", []GPU{{ID: "g", Type: "dev"}}},
		{"NaN memory", []GPU{{ID: "g", Type: "dev", MemoryMB: math.NaN()}}},
		{"bad backend", []GPU{{ID: "g", Type: "dev", MemoryMB: 1, Backend: "vgpu"}}},
		{"bad size", []GPU{{ID: "g", Type: "dev", MemoryMB: 1, Sizes: []int{0, 100}}}},
		{"no MIG table", []GPU{{ID: "g", Type: "V100", MemoryMB: 1, Backend: BackendMIG}}},
		{"MIG size not a profile", []GPU{{ID: "g", Type: "dev", MemoryMB: 1, Backend: BackendMIG, MIGModel: migrules.A100_40GB, Sizes: []int{50}}}},
		{"negative max", []GPU{{ID: "g", Type: "dev", MemoryMB: 1, MaxGPULets: -1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), AlgoGpuletInt, Input{GPUs: tc.gpus, Demands: d}, Options{})
			require.ErrorIs(t, err, ErrBadInput)
		})
	}
	_, err := Run(context.Background(), "best", Input{GPUs: []GPU{mpsGPU("g", "dev", 1)}, Demands: d}, Options{})
	require.ErrorIs(t, err, ErrUnknownAlgo)
}

func TestSBPUsesWholeGPUs(t *testing.T) {
	in := splitWorkload(t)
	in.GPUs = append(in.GPUs, mpsGPU("h", "dev", 1000))
	plan := runPlan(t, AlgoSBP, in, Options{})
	checkSelf(t, in, plan)
	for _, g := range plan.GPUs {
		require.LessOrEqual(t, len(g.GPULets), 1)
		for _, l := range g.GPULets {
			require.Equal(t, 100, l.Size)
			for _, m := range l.Models {
				require.InDelta(t, 1, m.Factor, 0, "no neighbours, no interference")
			}
		}
	}
}

func TestMergeRevertsSplit(t *testing.T) {
	// Two light models: the first gets a gpu-let; for the second FINDBESTFIT
	// splits the free GPU, then MERGE puts it on the first's gpu-let by
	// temporal sharing and REVERTSPLIT leaves the second GPU untouched.
	a := sublinearProfile(t, "a", "dev", 100, 0.5, 1)
	b := sublinearProfile(t, "b", "dev", 100, 0.5, 1)
	in := Input{GPUs: []GPU{mpsGPU("g0", "dev", 1000), mpsGPU("g1", "dev", 1000)}, Demands: []Demand{
		{Name: "a", Profile: a, SLOMS: 40, Rate: 60},
		{Name: "b", Profile: b, SLOMS: 40, Rate: 50},
	}}
	for _, algo := range []Algo{AlgoGpulet, AlgoGpuletInt} {
		plan := runPlan(t, algo, in, Options{Interference: constPredictor(1.2)})
		checkSelf(t, in, plan)
		require.True(t, plan.Schedulable)
		require.Equal(t, 1, plan.UsedGPUs())
		require.Len(t, plan.GPUs[0].GPULets, 1)
		require.Len(t, plan.GPUs[0].GPULets[0].Models, 2)
		require.Equal(t, "a", plan.GPUs[0].GPULets[0].Models[0].Name, "the larger rate is placed first")
		// p_req for 60 req/s is the smallest size that affords it.
		require.Equal(t, minRequiredSize(t, a, 40, 60), plan.GPUs[0].GPULets[0].Size)
	}
}

// minRequiredSize is MINREQUIREDPARTITION worked out from AffordableRate.
func minRequiredSize(t *testing.T, p *Profile, slo, rate float64) int {
	for _, s := range DefaultMPSSizes {
		if r, _, ok := AffordableRate(p, slo, s); ok && r >= rate {
			return s
		}
	}
	t.Fatal("no size affords the rate")
	return 0
}

func TestSortByRate(t *testing.T) {
	// The model with the larger rate takes the first GPU even though it
	// comes second in the input; by rate × SLO the other one leads.
	a := linearProfile(t, "a", "dev", 100, 1, 2, 16, 100)
	b := linearProfile(t, "b", "dev", 100, 1, 2, 16, 100)
	in := Input{GPUs: []GPU{wholeGPU("g0", "dev", 1000), wholeGPU("g1", "dev", 1000)}, Demands: []Demand{
		{Name: "a", Profile: a, SLOMS: 40, Rate: 500},
		{Name: "b", Profile: b, SLOMS: 20, Rate: 700},
	}}
	plan := runPlan(t, AlgoGpulet, in, Options{})
	require.Equal(t, "b", plan.GPUs[0].GPULets[0].Models[0].Name)
	plan = runPlan(t, AlgoGpulet, in, Options{SortByRateSLO: true})
	require.Equal(t, "a", plan.GPUs[0].GPULets[0].Models[0].Name)
}

func TestSplitOnlyWhenItPays(t *testing.T) {
	// With a fixed part per batch a 20% gpu-let serves more per percent:
	// gpulet splits. With a 3× slowdown beside a copy of itself the split
	// no longer pays: gpulet-int takes the whole GPU.
	in := splitWorkload(t)
	in.Demands = in.Demands[:1]
	in.Demands[0].Rate = 300
	plain := runPlan(t, AlgoGpulet, in, Options{})
	require.Less(t, plain.GPUs[0].GPULets[0].Size, 100)
	withInt := runPlan(t, AlgoGpuletInt, in, Options{Interference: constPredictor(3)})
	require.Equal(t, 100, withInt.GPUs[0].GPULets[0].Size)
	mild := runPlan(t, AlgoGpuletInt, in, Options{Interference: constPredictor(1.01)})
	require.Less(t, mild.GPUs[0].GPULets[0].Size, 100)
	checkSelf(t, in, mild)
	for _, l := range mild.GPUs[0].GPULets {
		if l.Size < 100 {
			// Slowed 1.01×: 2·L·1.01 ≤ 24 and b/(L·1.01).
			r, _, _ := AffordableRate(in.Demands[0].Profile, 24/1.01, l.Size)
			require.LessOrEqual(t, l.Models[0].Rate, r/1.01*(1+1e-9), "a split gpu-let keeps room for its neighbour's slowdown")
		}
	}

	// A rate beyond what the split gpu-let serves: both keep allocating
	// knee-sized gpu-lets, as Algorithm 1 does, while the split pays with
	// the interference counted; with a 3× slowdown it does not, and
	// gpulet-int takes whole GPUs.
	in.Demands[0].Rate = 1500
	big := runPlan(t, AlgoGpuletInt, in, Options{Interference: constPredictor(1.01)})
	checkSelf(t, in, big)
	require.Len(t, big.GPUs[0].GPULets, 2)
	require.Less(t, big.GPUs[0].GPULets[0].Size, 100)
	plainBig := runPlan(t, AlgoGpulet, in, Options{})
	require.Len(t, plainBig.GPUs[0].GPULets, 2)
	bigSlow := runPlan(t, AlgoGpuletInt, in, Options{Interference: constPredictor(3)})
	for _, g := range bigSlow.GPUs {
		for _, l := range g.GPULets {
			require.Equal(t, 100, l.Size)
		}
	}
}

func TestMIGPlansAreValidLayouts(t *testing.T) {
	sizes := []int{14, 29, 43, 57, 100}
	var ds []Demand
	for i, n := range []string{"a", "b", "c", "d"} {
		p := linearProfile(t, n, "dev", 3000+2000*float64(i), 0.5, 4, 32, sizes...)
		ds = append(ds, Demand{Name: n, Profile: p, SLOMS: 30, Rate: 400 + 300*float64(i)})
	}
	gpu := func(id string) GPU {
		return GPU{ID: id, Type: "dev", MemoryMB: 40960, Backend: BackendMIG, MIGModel: migrules.A100_40GB}
	}
	in := Input{GPUs: []GPU{gpu("g0"), gpu("g1"), gpu("g2")}, Demands: ds}
	for _, algo := range Algos() {
		t.Run(string(algo), func(t *testing.T) {
			plan := runPlan(t, algo, in, Options{Interference: constPredictor(1.5)})
			checkSelf(t, in, plan)
			mig, err := migrules.Lookup(migrules.A100_40GB)
			require.NoError(t, err)
			for _, g := range plan.GPUs {
				var names []string
				for _, l := range g.GPULets {
					require.NotEmpty(t, l.MIGProfile)
					prof, err := mig.Profile(l.MIGProfile)
					require.NoError(t, err)
					require.Equal(t, l.Size, mig.Percent(prof))
					names = append(names, l.MIGProfile)
					mem := 0.0
					for _, m := range l.Models {
						mem += m.MemoryMB
						require.InDelta(t, 1, m.Factor, 0, "MIG instances do not interfere")
					}
					require.LessOrEqual(t, mem, 40960*float64(prof.Size)/8)
				}
				if len(names) > 0 {
					require.NoError(t, migrules.ValidLayout(migrules.A100_40GB, names))
				}
			}
		})
	}
}

func TestIdealAtLeastHeuristics(t *testing.T) {
	a := linearProfile(t, "a", "dev", 100, 0.5, 4, 32)
	b := linearProfile(t, "b", "dev", 100, 1, 2, 32)
	c := linearProfile(t, "c", "dev", 100, 2, 1, 32)
	for _, rates := range [][3]float64{{800, 400, 100}, {1500, 200, 300}, {300, 900, 200}, {2000, 1000, 500}} {
		in := Input{GPUs: []GPU{mpsGPU("g0", "dev", 16000), mpsGPU("g1", "dev", 16000)}, Demands: []Demand{
			{Name: "a", Profile: a, SLOMS: 30, Rate: rates[0]},
			{Name: "b", Profile: b, SLOMS: 40, Rate: rates[1]},
			{Name: "c", Profile: c, SLOMS: 60, Rate: rates[2]},
		}}
		opts := Options{Interference: constPredictor(1.05)}
		ideal := runPlan(t, AlgoIdeal, in, opts)
		checkSelf(t, in, ideal)
		for _, algo := range []Algo{AlgoGpuletInt, AlgoSBP} {
			p := runPlan(t, algo, in, opts)
			if p.Schedulable {
				require.True(t, ideal.Schedulable, "%v: %s schedules, ideal must too", rates, algo)
			}
		}
	}
}

func TestIdealHonoursContext(t *testing.T) {
	in := splitWorkload(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in.Demands[0].Rate = 1e5 // unschedulable, so the search must run
	in.GPUs = append(in.GPUs, mpsGPU("h", "dev", 1000), mpsGPU("i", "dev", 1000))
	in.Demands = append(in.Demands, Demand{Name: "c", Profile: in.Demands[0].Profile, SLOMS: 40, Rate: 10})
	_, err := Run(ctx, AlgoIdeal, in, Options{})
	if err != nil {
		require.ErrorIs(t, err, context.Canceled)
	}
}

func TestPlanJSONNames(t *testing.T) {
	in := splitWorkload(t)
	in.Demands[1].Rate = 1e5
	plan := runPlan(t, AlgoGpuletInt, in, Options{})
	raw, err := json.Marshal(plan)
	require.NoError(t, err)
	var doc struct {
		Schedulable *bool `json:"schedulable"`
		GPUs        []struct {
			ID      *string `json:"id"`
			GPULets []struct {
				Size   *int `json:"size"`
				Models []map[string]any
			} `json:"gpulets"`
		} `json:"gpus"`
		Unscheduled map[string]float64 `json:"unscheduled"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.NotNil(t, doc.Schedulable)
	require.False(t, *doc.Schedulable)
	require.Equal(t, "g", *doc.GPUs[0].ID)
	require.NotNil(t, doc.GPUs[0].GPULets[0].Size)
	for _, k := range []string{"name", "batch", "rate", "latency_ms"} {
		require.Contains(t, doc.GPUs[0].GPULets[0].Models[0], k)
	}
	require.Greater(t, doc.Unscheduled["b"], 0.0)
}

// TestMIGResidueTakesASmallInstance: a model's residue that a small MIG
// instance can carry gets one even where small instances serve less per
// GPC than the whole GPU (so splitting at the knee does not pay): isolated
// instances never slow each other down, and the rest of the GPU stays free
// for other models. On an MPS GPU the same residue takes the whole GPU
// while the plan places everything (a residue's size follows its rate, so
// a split residue would start a new gpu-let at every rate change);
// TestASmallModelLeavesRoomForALongOne is the case where it must not.
func TestMIGResidueTakesASmallInstance(t *testing.T) {
	sizes := []int{14, 29, 43, 57, 100}
	var pts []Point
	for _, s := range sizes {
		per := 0.5 // ms per request on the whole GPU
		if s < 100 {
			per *= 1.3 * 100 / float64(s) // small instances 30% less efficient per GPC
		}
		for b := 1; b <= 32; b++ {
			pts = append(pts, Point{Batch: b, Size: s, P50MS: per * float64(b)})
		}
	}
	prof, err := NewProfile("a", "dev", 1000, pts)
	require.NoError(t, err)
	// The whole GPU serves 2000 req/s within 30 ms (batches of 30 in 15 ms).
	demand := []Demand{{Name: "a", Profile: prof, SLOMS: 30, Rate: 2100}}
	for _, tc := range []struct {
		name     string
		gpu      func(id string) GPU
		wantSize int
	}{
		{"MIG", func(id string) GPU {
			return GPU{ID: id, Type: "dev", MemoryMB: 40960, Backend: BackendMIG, MIGModel: migrules.A100_40GB}
		}, 14},
		{"MPS", func(id string) GPU {
			return GPU{ID: id, Type: "dev", MemoryMB: 40960, Backend: BackendMPS, Sizes: sizes}
		}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{GPUs: []GPU{tc.gpu("g0"), tc.gpu("g1")}, Demands: demand}
			plan := runPlan(t, AlgoGpulet, in, Options{})
			checkSelf(t, in, plan)
			require.True(t, plan.Schedulable)
			pl := placements(plan, "a")
			require.Len(t, pl, 2)
			var residue *GPULet
			for gi := range plan.GPUs {
				for li := range plan.GPUs[gi].GPULets {
					l := &plan.GPUs[gi].GPULets[li]
					if l.Models[0].Rate < 1000 {
						residue = l
					}
				}
			}
			require.NotNil(t, residue)
			require.InDelta(t, 100, residue.Models[0].Rate, 1e-6)
			require.Equal(t, tc.wantSize, residue.Size)
		})
	}
}

// TestMIGMemoryCountsEveryProcess: a batch that runs as several MPS
// processes inside an instance loads the model once per process, so the
// planner gives it an instance whose memory holds them all (a 1g.5gb of an
// A100 40GB holds two 2 GB copies, not four).
func TestMIGMemoryCountsEveryProcess(t *testing.T) {
	var pts []Point
	for _, s := range []int{14, 29, 43, 57, 100} {
		pts = append(pts,
			Point{Batch: 1, Size: s, P50MS: 10, Procs: 1},
			Point{Batch: 8, Size: s, P50MS: 12, Procs: 4}) // four processes of batch 2
	}
	prof, err := NewProfile("a", "dev", 2000, pts)
	require.NoError(t, err)
	in := Input{
		GPUs:    []GPU{{ID: "g0", Type: "dev", MemoryMB: 40960, Backend: BackendMIG, MIGModel: migrules.A100_40GB}},
		Demands: []Demand{{Name: "a", Profile: prof, SLOMS: 100, Rate: 300}},
	}
	plan := runPlan(t, AlgoGpulet, in, Options{})
	checkSelf(t, in, plan)
	require.True(t, plan.Schedulable)
	for _, l := range plan.GPUs[0].GPULets {
		for _, m := range l.Models {
			if m.Procs > 2 {
				require.Greater(t, l.Size, 14, "%d processes of 2 GB do not fit a 1g.5gb", m.Procs)
			}
		}
	}
	require.LessOrEqual(t, plan.GPUs[0].MemoryUsedMB, 40960.0)
}

// TestASmallModelLeavesRoomForALongOne is the demo repository on a two-core
// CPU device (gpu-lets of 50% and 100%), with profiles shaped as measured
// there: a small model with a 5 ms SLO serves slightly more per core on
// both cores (so splitting never pays for it) and its whole rate fits on
// one core; a model whose batch of one takes 18–33 ms cannot share the
// small one's 5 ms duty cycle. The small model used to take the whole
// device and leave the long one unplaced at any rate; the second pass that
// splits residues off MPS GPUs places both.
func TestASmallModelLeavesRoomForALongOne(t *testing.T) {
	cpu := GPU{ID: "cpu", Type: "cpu", MemoryMB: 16384, Backend: BackendMPS, Sizes: []int{50, 100}}
	var small, long []Point
	for b := 1; b <= 32; b *= 2 {
		small = append(small,
			Point{Batch: b, Size: 50, P50MS: 0.10 + 0.032*float64(b)},
			Point{Batch: b, Size: 100, P50MS: 0.08 + 0.015*float64(b)})
		long = append(long,
			Point{Batch: b, Size: 50, P50MS: 33 * float64(b)},
			Point{Batch: b, Size: 100, P50MS: 18 * float64(b)})
	}
	smallProf, err := NewProfile("small", "cpu", 256, small)
	require.NoError(t, err)
	longProf, err := NewProfile("long", "cpu", 256, long)
	require.NoError(t, err)
	for _, rate := range []float64{1, 12, 120} {
		in := Input{GPUs: []GPU{cpu}, Demands: []Demand{
			{Name: "small", Profile: smallProf, SLOMS: 5, Rate: rate},
			{Name: "long", Profile: longProf, SLOMS: 500, Rate: 1.2},
		}}
		for _, algo := range []Algo{AlgoGpulet, AlgoGpuletInt} {
			plan := runPlan(t, algo, in, Options{})
			checkSelf(t, in, plan)
			require.True(t, plan.Schedulable, "%s at %g req/s: %v", algo, rate, plan.Reasons)
			var sizes []int
			for _, l := range plan.GPUs[0].GPULets {
				sizes = append(sizes, l.Size)
			}
			require.Equal(t, []int{50, 50}, sizes, "%s at %g req/s", algo, rate)
		}
	}
}

func TestAModelBeyondEveryGpuletsMemorySaysWhereTheMemoryComesFrom(t *testing.T) {
	cpu := mpsGPU("cpu", "cpu", 700)
	cpu.MemoryFrom = "gpuletd's memory limit of 768 MiB less the daemon's peak of 68 MiB"
	in := Input{GPUs: []GPU{cpu, mpsGPU("g1", "dev", 16000)}, Demands: []Demand{
		{Name: "vgg", Profile: linearProfile(t, "vgg", "cpu", 1438, 1, 2, 8), SLOMS: 50, Rate: 10},
		{Name: "small", Profile: linearProfile(t, "small", "cpu", 300, 1, 2, 8), SLOMS: 50, Rate: 10},
	}}
	for _, algo := range Algos() {
		plan := runPlan(t, algo, in, Options{Interference: constPredictor(1.1)})
		require.Equal(t, "needs 1438 MB of memory for one copy, more than any gpu-let has (cpu: 700 MB, "+
			"gpuletd's memory limit of 768 MiB less the daemon's peak of 68 MiB)", plan.Reasons["vgg"], algo)
		require.NotContains(t, plan.Unscheduled, "small", algo)
	}
}

// A model that would fit alone but finds no device with its memory left
// beside the models placed first says so, with each device's memory left,
// rather than the general words.
func TestAModelLeftForWantOfMemoryLeftSaysSo(t *testing.T) {
	in := Input{GPUs: []GPU{mpsGPU("cpu", "cpu", 907)}, Demands: []Demand{
		{Name: "a", Profile: linearProfile(t, "a", "cpu", 705, 1, 2, 8), SLOMS: 50, Rate: 20},
		{Name: "vgg", Profile: linearProfile(t, "vgg", "cpu", 383, 1, 2, 8), SLOMS: 50, Rate: 10},
	}}
	for _, algo := range []Algo{AlgoGpuletInt, AlgoGpulet, AlgoSBP} {
		plan := runPlan(t, algo, in, Options{Interference: constPredictor(1.1)})
		require.Equal(t, "10 req/s left over: no device has the memory left for a copy of it (it needs 383 MB; "+
			"free beside the models placed: cpu 202 of 907 MB)", plan.Reasons["vgg"], algo)
		require.Empty(t, plan.Unplaceable, "it fits alone")
		require.NotContains(t, plan.Unscheduled, "a", algo)
	}
}

// A model left out because every gpu-let it could share would break an
// SLO (a device whose shares are all cut, each holding a model with a
// tight SLO) says which SLO each would break, rather than the general
// words.
func TestAModelNoGpuletCanShareWithSaysWhichSLOsStopIt(t *testing.T) {
	cpu := mpsGPU("cpu", "cpu", 100000)
	cpu.Sizes = []int{50, 100}
	in := Input{GPUs: []GPU{cpu}, Demands: []Demand{
		{Name: "fast", Profile: linearProfile(t, "fast", "cpu", 10, 0.25, 0.5, 8, 50, 100), SLOMS: 5, Rate: 1},
		{Name: "mid", Profile: linearProfile(t, "mid", "cpu", 10, 10, 5, 8, 50, 100), SLOMS: 100, Rate: 1},
		{Name: "slow", Profile: linearProfile(t, "slow", "cpu", 10, 40, 10, 8, 50, 100), SLOMS: 1000, Rate: 1},
	}}
	for _, algo := range []Algo{AlgoGpuletInt, AlgoGpulet} {
		plan := runPlan(t, algo, in, Options{})
		require.Equal(t, map[string]float64{"slow": 1}, plan.Unscheduled, algo)
		require.Equal(t, "1 req/s left over: every share of the node's one device is cut into gpu-lets, and none can take slow in within the SLOs: "+
			"cpu 50% (fast): fast (SLO 5 ms) may wait at most 4 ms for a cycle of batches, and a batch of one of each model there and of slow (90 ms) takes 91 ms; "+
			"cpu 50% (mid): mid (SLO 100 ms) may wait at most 75 ms for a cycle of batches, and a batch of one of each model there and of slow (90 ms) takes 115 ms",
			plan.Reasons["slow"], algo)
	}
	// Where a model's own SLO is what stops it, it says so.
	in.Demands[2].SLOMS = 150
	in.Demands[1].SLOMS = 1000
	plan := runPlan(t, AlgoGpuletInt, in, Options{})
	require.Contains(t, plan.Reasons["slow"], "cpu 50% (mid): slow's own SLO of 150 ms leaves at most 60 ms for a cycle of batches, and a batch of one of each model there and of its own takes 115 ms")
	// With a share left free the general words stand.
	in.GPUs[0].Sizes = []int{25, 50, 100}
	in.Demands[2].SLOMS = 1000
	in.Demands[2].Rate = 1e6
	plan = runPlan(t, AlgoGpuletInt, in, Options{})
	require.NotContains(t, plan.Reasons["slow"], "every share", "placed in part: its leftover rate is the general case")
}
