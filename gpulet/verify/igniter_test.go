package verify_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/planbench"
	"github.com/gpulet/gpuletd/gpulet/verify"
	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/stretchr/testify/require"
)

// igniter is the iGniter V100 node: profiles, the interference model fitted
// on its measured pairs and its physics (the measured co-located latencies
// where iGniter measured the pair).
type igniter struct {
	node *planbench.Node
	ph   planbench.Physics
}

var loadIgniter = sync.OnceValues(func() (*igniter, error) {
	set, err := refset.Load(refset.SetIgniterV100)
	if err != nil {
		return nil, err
	}
	node, err := planbench.NewNode(set, 4)
	if err != nil {
		return nil, err
	}
	ph, err := refset.NewPhysics(set, nil)
	if err != nil {
		return nil, err
	}
	return &igniter{node: node, ph: planbench.Physics{PH: ph}}, nil
})

func getIgniter(t testing.TB) *igniter {
	t.Helper()
	ig, err := loadIgniter()
	require.NoError(t, err)
	return ig
}

// TestGpuletIntHoldsOnMeasuredPhysics checks every gpulet-int plan of the
// schedulability scenarios against the iGniter physics.
func TestGpuletIntHoldsOnMeasuredPhysics(t *testing.T) {
	ig := getIgniter(t)
	for _, step := range []float64{150, 300, 450} {
		for _, rates := range ig.node.Scenarios(step) {
			in := ig.node.Input(rates)
			plan := runPlan(t, gpulet.AlgoGpuletInt, in, ig.node.Options())
			require.Empty(t, verify.Check(plan, in, ig.ph), "rates %v", rates)
		}
	}
}

// TestGpuletWithoutInterferenceBreaks shows the verifier is not the
// planner's arithmetic: gpulet, blind to interference, makes plans that the
// measured co-locations break (the gpu-let paper's Figure 13 finding).
func TestGpuletWithoutInterferenceBreaks(t *testing.T) {
	ig := getIgniter(t)
	broken := 0
	for _, rates := range ig.node.Scenarios(300) {
		in := ig.node.Input(rates)
		plan := runPlan(t, gpulet.AlgoGpulet, in, gpulet.Options{})
		if len(verify.Check(plan, in, ig.ph)) > 0 {
			broken++
		}
	}
	require.Greater(t, broken, 10)
}

// randomInput draws a workload on iGniter's models: 1-4 GPUs (MPS, whole,
// or an A100-like MIG table over the same profiles), 1-6 demands picking
// models at random (repeats are separate instances), rates up to 1,500
// req/s (zero now and then) and SLOs from 0.3 to 3 times the paper's rule.
func randomInput(ig *igniter, r *rand.Rand) gpulet.Input {
	var in gpulet.Input
	ngpu := 1 + r.IntN(4)
	backend := []gpulet.Backend{gpulet.BackendMPS, gpulet.BackendMPS, gpulet.BackendNone, gpulet.BackendMIG}[r.IntN(4)]
	for i := range ngpu {
		g := ig.node.GPUs[0]
		g.ID = string(rune('a' + i))
		g.Backend = backend
		if backend == gpulet.BackendMIG {
			g.Sizes, g.MIGModel, g.MemoryMB = nil, "A100-40GB", 40960
		}
		in.GPUs = append(in.GPUs, g)
	}
	for i := range 1 + r.IntN(6) {
		m := ig.node.Models[r.IntN(len(ig.node.Models))]
		rate := r.Float64() * 1500
		if r.IntN(8) == 0 {
			rate = 0
		}
		in.Demands = append(in.Demands, gpulet.Demand{
			Name: m.Name + "-" + string(rune('a'+i)), Profile: m.Profile,
			SLOMS: m.SLOMS * (0.3 + 2.7*r.Float64()), Rate: rate,
		})
	}
	return in
}

// FuzzPlansHoldOnPhysics plans random workloads with every planner that
// models interference and checks the plans against the iGniter physics:
// nothing panics and no plan breaks a rule.
func FuzzPlansHoldOnPhysics(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42, 1234, 99999} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		ig := getIgniter(t)
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		in := randomInput(ig, r)
		algos := []gpulet.Algo{gpulet.AlgoGpuletInt, gpulet.AlgoSBP}
		if len(in.GPUs) <= 2 && len(in.Demands) <= 4 {
			algos = append(algos, gpulet.AlgoIdeal) // small enough to search quickly
		}
		for _, algo := range algos {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			plan, err := gpulet.Run(ctx, algo, in, ig.node.Options())
			cancel()
			if algo == gpulet.AlgoIdeal && err != nil {
				continue // too large to search in time
			}
			require.NoError(t, err)
			require.Empty(t, verify.Check(plan, in, ig.ph), "%s on %+v", algo, in)
		}
	})
}
