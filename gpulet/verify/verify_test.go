package verify_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/verify"
	"github.com/stretchr/testify/require"
)

// fakePhysics: L(b,p) = (2 + b)·100/p ms alone; beside anything a batch
// takes factor times as long.
type fakePhysics struct{ factor float64 }

func (f fakePhysics) Solo(p verify.Placement) (float64, error) {
	if p.Model == "broken" {
		return 0, fmt.Errorf("no such model")
	}
	return float64(2+p.Batch) * 100 / float64(p.Size), nil
}

func (f fakePhysics) CoLocated(a, b verify.Placement) (float64, float64, error) {
	la, _ := f.Solo(a)
	lb, _ := f.Solo(b)
	return la * f.factor, lb * f.factor, nil
}

func profile(t *testing.T, name string, mem float64) *gpulet.Profile {
	t.Helper()
	var pts []gpulet.Point
	for _, s := range []int{14, 20, 29, 40, 43, 50, 57, 60, 80, 100} {
		for b := 1; b <= 16; b++ {
			pts = append(pts, gpulet.Point{Batch: b, Size: s, P50MS: float64(2+b) * 100 / float64(s)})
		}
	}
	p, err := gpulet.NewProfile(name, "dev", mem, pts)
	require.NoError(t, err)
	return p
}

func rules(vs []verify.Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

func TestCheckRules(t *testing.T) {
	a, b := profile(t, "a", 300), profile(t, "b", 300)
	in := gpulet.Input{
		GPUs: []gpulet.GPU{{ID: "g", Type: "dev", MemoryMB: 1000, Backend: gpulet.BackendMPS}},
		Demands: []gpulet.Demand{
			{Name: "a", Profile: a, SLOMS: 40, Rate: 200},
			{Name: "b", Profile: b, SLOMS: 40, Rate: 100},
		},
	}
	// a: batch 4 at 50% takes 12 ms; b: batch 2 at 50% takes 8 ms.
	good := func() *gpulet.Plan {
		return &gpulet.Plan{Schedulable: true, Unscheduled: map[string]float64{}, GPUs: []gpulet.GPUPlan{{ID: "g", GPULets: []gpulet.GPULet{
			{Size: 50, Models: []gpulet.Placement{{Name: "a", Batch: 4, Rate: 200}}},
			{Size: 50, Models: []gpulet.Placement{{Name: "b", Batch: 2, Rate: 100}}},
		}}}}
	}
	tests := []struct {
		name   string
		factor float64
		edit   func(p *gpulet.Plan, in *gpulet.Input)
		want   []string
	}{
		{"good", 1, func(*gpulet.Plan, *gpulet.Input) {}, nil},
		// a: 12 ms per 4 requests = 333 req/s ≥ 200; 12 + 12 ≤ 40.
		{"interference breaks latency", 1.8, func(*gpulet.Plan, *gpulet.Input) {}, []string{verify.RuleLatency, verify.RuleThroughput}},
		{"rate above throughput", 1, func(p *gpulet.Plan, in *gpulet.Input) {
			p.GPUs[0].GPULets[0].Models[0].Rate = 400
			in.Demands[0].Rate = 400
		}, []string{verify.RuleThroughput}},
		{"oversized", 1, func(p *gpulet.Plan, _ *gpulet.Input) { p.GPUs[0].GPULets[1].Size = 60 }, []string{verify.RuleSize}},
		{"too many gpu-lets", 1, func(p *gpulet.Plan, _ *gpulet.Input) {
			p.GPUs[0].GPULets = append(p.GPUs[0].GPULets, gpulet.GPULet{Size: 0})
		}, []string{verify.RuleCount}},
		{"memory", 1, func(_ *gpulet.Plan, in *gpulet.Input) { in.GPUs[0].MemoryMB = 500 }, []string{verify.RuleMemory}},
		{"batch beyond profile", 1, func(p *gpulet.Plan, _ *gpulet.Input) { p.GPUs[0].GPULets[0].Models[0].Batch = 17 }, []string{verify.RuleBatch}},
		{"rate lost", 1, func(p *gpulet.Plan, _ *gpulet.Input) { p.GPUs[0].GPULets[1].Models[0].Rate = 50 }, []string{verify.RuleAccounting}},
		{"flag wrong", 1, func(p *gpulet.Plan, _ *gpulet.Input) { p.Schedulable = false }, []string{verify.RuleSchedulable}},
		{"other GPU", 1, func(p *gpulet.Plan, _ *gpulet.Input) { p.GPUs[0].ID = "h" }, []string{verify.RuleGPUs, verify.RuleAccounting, verify.RuleAccounting}},
		{"physics fails", 1, func(_ *gpulet.Plan, in *gpulet.Input) { in.Demands[0].Profile = profile(t, "broken", 1) }, []string{verify.RulePhysics}},
		{"MIG layout refused", 1, func(p *gpulet.Plan, in *gpulet.Input) {
			in.GPUs[0] = gpulet.GPU{ID: "g", Type: "dev", MemoryMB: 40960, Backend: gpulet.BackendMIG, MIGModel: "A100-40GB"}
			p.GPUs[0].GPULets[0].Size, p.GPUs[0].GPULets[0].MIGProfile = 57, "4g.20gb"
			p.GPUs[0].GPULets[1].Size, p.GPUs[0].GPULets[1].MIGProfile = 57, "4g.20gb"
		}, []string{verify.RuleMIG}},
		{"MIG instance memory", 1, func(p *gpulet.Plan, in *gpulet.Input) {
			in.GPUs[0] = gpulet.GPU{ID: "g", Type: "dev", MemoryMB: 2048, Backend: gpulet.BackendMIG, MIGModel: "A100-40GB"}
			p.GPUs[0].GPULets[0].Size, p.GPUs[0].GPULets[0].MIGProfile = 57, "4g.20gb"
			p.GPUs[0].GPULets[1].Size, p.GPUs[0].GPULets[1].MIGProfile, p.GPUs[0].GPULets[1].MIGStart = 14, "1g.5gb", 4
		}, []string{verify.RuleMemory, verify.RuleLatency, verify.RuleThroughput}}, // b is also too slow on 1g
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, inc := good(), in
			inc.GPUs = append([]gpulet.GPU{}, in.GPUs...)
			inc.Demands = append([]gpulet.Demand{}, in.Demands...)
			tc.edit(p, &inc)
			vs := verify.Check(p, inc, fakePhysics{tc.factor})
			require.ElementsMatch(t, tc.want, rules(vs), "%v", vs)
			for _, v := range vs {
				require.NotEmpty(t, v.String())
			}
		})
	}
}

func TestCheckPlannerPlans(t *testing.T) {
	// The planners' own plans pass against a physics that is their
	// arithmetic with a constant slowdown they were told about.
	var ds []gpulet.Demand
	for i, n := range []string{"a", "b", "c"} {
		ds = append(ds, gpulet.Demand{Name: n, Profile: profile(t, n, 500), SLOMS: 30 + 10*float64(i), Rate: 300 + 200*float64(i)})
	}
	in := gpulet.Input{GPUs: []gpulet.GPU{
		{ID: "g0", Type: "dev", MemoryMB: 16000},
		{ID: "g1", Type: "dev", MemoryMB: 16000},
	}, Demands: ds}
	for _, algo := range gpulet.Algos() {
		plan := runPlan(t, algo, in, gpulet.Options{Interference: constFactor(1.25)})
		f := 1.25
		if algo == gpulet.AlgoGpulet {
			f = 1
		}
		require.Empty(t, verify.Check(plan, in, fakePhysics{f}), algo)
		require.False(t, math.IsNaN(plan.UnscheduledRate()))
	}
}
