package mps

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/gpulet/gpuletd/gpulet"
	"github.com/gpulet/gpuletd/gpulet/migrules"
	"github.com/gpulet/gpuletd/profiler/refset"
	"github.com/gpulet/gpuletd/sim/workload"
)

// parvaScenario4 is ParvaGPU's fourth SLO scenario (its SLO/ files, row 4):
// the 11 models' rates (req/s) and latency SLOs (ms).
var parvaScenario4 = []workload.Model{
	{Name: "bert", Rate: 69, SLOMS: 4294}, {Name: "densenet121", Rate: 1091, SLOMS: 126},
	{Name: "densenet169", Rate: 949, SLOMS: 150}, {Name: "densenet201", Rate: 739, SLOMS: 119},
	{Name: "inceptionv3", Rate: 1576, SLOMS: 282}, {Name: "mobilenetv2", Rate: 2318, SLOMS: 113},
	{Name: "resnet101", Rate: 1140, SLOMS: 144}, {Name: "resnet152", Rate: 815, SLOMS: 146},
	{Name: "resnet50", Rate: 2195, SLOMS: 138}, {Name: "vgg16", Rate: 1169, SLOMS: 227},
	{Name: "vgg19", Rate: 1010, SLOMS: 265},
}

// TestMIGPlanAppliesOnA100: a plan the planner makes on the measured A100
// data (every gpu-let a MIG instance, MPS processes inside some) is laid out
// on go-nvml's A100 80GB mock through the same ApplyMIG the daemon calls,
// with the plan's own profile names (the daemon's migLayout), and every
// gpu-let then gets an instance of its size to lease.
func TestMIGPlanAppliesOnA100(t *testing.T) {
	var plan *gpulet.Plan
	for n := 1; n <= 16 && plan == nil; n++ {
		w := &workload.Workload{
			Devices: []workload.Device{{Profiles: refset.SetParvaGPUA100, Count: n, Partitioning: string(gpulet.BackendMIG), MaxGPULets: 7}},
			Algo:    string(gpulet.AlgoGpulet), Rule: string(gpulet.RuleParvaGPU), Models: parvaScenario4,
		}
		p, err := workload.Plan(context.Background(), w, "")
		require.NoError(t, err)
		if p.Schedulable {
			plan = p
		}
	}
	require.NotNil(t, plan, "the scenario fits on 16 A100s")

	s, mocks := newServer(t, gpus.A100_SXM4_80GB, len(plan.GPUs))
	for _, g := range mocks {
		g.enableMIG(t)
	}
	m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, Backend: BackendMIG}, NVML: s, Logger: zaptest.NewLogger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close(context.Background())) })

	sawProcs, sawSplit := false, false
	for gi, gp := range plan.GPUs {
		dev := fmt.Sprintf("gpu%d", gi)
		var layout, want []string
		for _, l := range gp.GPULets {
			require.NotEmpty(t, l.MIGProfile)
			layout = append(layout, l.MIGProfile)
			want = append(want, fmt.Sprintf("%s@%d", l.MIGProfile, l.MIGStart))
			for _, pl := range l.Models {
				sawProcs = sawProcs || pl.Procs > 1
			}
		}
		sawSplit = sawSplit || len(gp.GPULets) > 1
		if len(layout) == 0 {
			continue
		}
		_, err := m.ApplyMIG(dev, layout)
		require.NoError(t, err, "%s: %v", dev, layout)
		// The instances the plan placed, where it placed them (the mock
		// names the whole A100 80GB 7g.79gb, the published name 7g.80gb).
		got := mocks[gi].layout()
		require.Len(t, got, len(want), "%s: %v", dev, got)
		for _, w := range want {
			wp, ws, _ := strings.Cut(w, "@")
			require.True(t, slices.ContainsFunc(got, func(g string) bool {
				gp, gs, _ := strings.Cut(g, "@")
				return gs == ws && migrules.SameProfile(gp, wp)
			}), "%s: %s in %v", dev, w, got)
		}

		// Every gpu-let leases an instance of its own profile.
		free := slices.Clone(m.Inventory().Devices[gi].MIG.Instances)
		for _, l := range gp.GPULets {
			i := slices.IndexFunc(free, func(in MIGInstance) bool { return migrules.SameProfile(in.Profile, l.MIGProfile) })
			require.GreaterOrEqual(t, i, 0, "%s: an instance %s for the gpu-let", dev, l.MIGProfile)
			lease, err := m.Lease(Gpulet{ID: fmt.Sprintf("%s-%d", dev, i), Device: dev, MIGInstance: free[i].UUID})
			require.NoError(t, err)
			require.Contains(t, lease.Env(), fmt.Sprintf("GPULETD_GPULET_SIZE=%d", l.Size))
			lease.Release()
			free = slices.Delete(free, i, i+1)
		}
	}
	require.True(t, sawProcs, "the plan runs several MPS processes in some instance")
	require.True(t, sawSplit, "the plan splits some A100")
}
