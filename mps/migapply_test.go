package mps

import (
	"context"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/gpulet/gpuletd/gpulet/migrules"
)

func migManager(t *testing.T, cfg gpus.Config) (*Manager, *gpuMock) {
	t.Helper()
	s, mocks := newServer(t, cfg, 1)
	mocks[0].enableMIG(t)
	m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, Backend: BackendMIG}, NVML: s, Logger: zaptest.NewLogger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close(context.Background())) })
	return m, mocks[0]
}

func giIDs(insts []MIGInstance) map[string]int {
	out := map[string]int{}
	for _, in := range insts {
		out[in.Profile+"@"+string(rune('0'+in.Start))] = in.GPUInstance
	}
	return out
}

func TestApplyMIG(t *testing.T) {
	m, g := migManager(t, gpus.A100_SXM4_40GB)

	insts, err := m.ApplyMIG("gpu0", []string{"4g", "3g"})
	require.NoError(t, err)
	require.Equal(t, []string{"4g.20gb@0", "3g.20gb@4"}, g.layout())
	require.Len(t, insts, 2)
	for _, in := range insts {
		require.GreaterOrEqual(t, in.ComputeInstance, 0, "each GPU instance gets a compute instance")
		require.NotEmpty(t, in.UUID)
	}
	before := giIDs(insts)

	// The 3g stays where it is; the 4g gives way to 2g+1g+1g.
	insts, err = m.ApplyMIG("gpu0", []string{"3g.20gb", "2g", "1g", "1g"})
	require.NoError(t, err)
	require.Equal(t, []string{"2g.10gb@0", "1g.5gb@2", "1g.5gb@3", "3g.20gb@4"}, g.layout())
	require.Equal(t, before["3g.20gb@4"], giIDs(insts)["3g.20gb@4"], "the matching instance is kept, not rebuilt")

	// The inventory follows, and an executor on the 3g gets its MIG UUID.
	var threeG MIGInstance
	for _, in := range m.Inventory().Devices[0].MIG.Instances {
		if in.Profile == "3g.20gb" {
			threeG = in
		}
	}
	require.NotEmpty(t, threeG.UUID)
	lease, err := m.Lease(Gpulet{ID: "a", Device: "gpu0", MIGInstance: threeG.UUID})
	require.NoError(t, err)
	require.Contains(t, lease.Env(), "CUDA_VISIBLE_DEVICES="+threeG.UUID)
	require.Contains(t, lease.Env(), "GPULETD_GPULET_SIZE=43")
	require.NotContains(t, lease.Env(), "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=43")
	_, err = m.Lease(Gpulet{ID: "b", Device: "gpu0", MIGInstance: threeG.UUID})
	require.ErrorIs(t, err, ErrBadGpulet, "one gpu-let per instance")

	// A leased instance is never destroyed.
	_, err = m.ApplyMIG("gpu0", []string{"7g"})
	require.ErrorIs(t, err, ErrMIGInUse)
	require.ErrorContains(t, err, "holds a gpu-let")
	require.Equal(t, []string{"2g.10gb@0", "1g.5gb@2", "1g.5gb@3", "3g.20gb@4"}, g.layout())
	lease.Release()

	// Nor one that runs a process.
	twoG := giIDs(insts)["2g.10gb@0"]
	g.setProcs(nvml.ProcessInfo{Pid: 999, GpuInstanceId: uint32(twoG), ComputeInstanceId: 0})
	_, err = m.ApplyMIG("gpu0", []string{"7g"})
	require.ErrorIs(t, err, ErrMIGInUse)
	require.ErrorContains(t, err, "runs pid 999")
	require.Equal(t, []string{"2g.10gb@0", "1g.5gb@2", "1g.5gb@3", "3g.20gb@4"}, g.layout())
	// Keeping the busy instance is fine.
	_, err = m.ApplyMIG("gpu0", []string{"2g", "1g", "3g"})
	require.NoError(t, err)
	require.Equal(t, []string{"2g.10gb@0", "1g.5gb@2", "3g.20gb@4"}, g.layout())
	// A 4g can only start at 0: it would take the busy 2g's place.
	_, err = m.ApplyMIG("gpu0", []string{"2g", "4g"})
	require.ErrorIs(t, err, ErrMIGInUse)
	g.setProcs()

	// Layouts the hardware cannot make are refused before anything changes.
	now := g.layout()
	for _, bad := range [][]string{{"4g", "4g"}, {"7g", "1g"}, {"3g", "3g", "1g"}, {"5g"}, {"1g.5gb+me", "1g.5gb+me"}} {
		_, err = m.ApplyMIG("gpu0", bad)
		require.ErrorIs(t, err, ErrMIGLayout, "%v", bad)
		require.Equal(t, now, g.layout())
	}

	insts, err = m.ApplyMIG("gpu0", []string{"7g"})
	require.NoError(t, err)
	require.Equal(t, []string{"7g.40gb@0"}, g.layout())
	require.Len(t, insts, 1)
	require.Equal(t, 100, insts[0].Size)
	require.Equal(t, 98, insts[0].SMCount)

	insts, err = m.ApplyMIG("gpu0", nil)
	require.NoError(t, err)
	require.Empty(t, insts)
	require.Empty(t, g.layout())
}

func TestApplyMIGRelayoutWhenKeepingCannotWork(t *testing.T) {
	_, g := migManager(t, gpus.A100_SXM4_40GB)
	g.enableMIG(t, [2]int{nvml.GPU_INSTANCE_PROFILE_2_SLICE, 2})
	// 4g can only start at 0, where the kept 2g at 2 is in the way: start over.
	insts, err := ApplyMIGLayout(g, g.Config.Name, []string{"2g", "4g"}, nil, zap.NewNop())
	require.NoError(t, err)
	require.Equal(t, []string{"4g.20gb@0", "2g.10gb@4"}, g.layout())
	require.Len(t, insts, 2)
}

func TestApplyMIGRebuildsInstancesWithoutComputeInstance(t *testing.T) {
	_, g := migManager(t, gpus.A100_SXM4_40GB)
	info, _ := g.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_3_SLICE)
	_, ret := g.CreateGpuInstanceWithPlacement(&info, &nvml.GpuInstancePlacement{Start: 4, Size: 4})
	require.Equal(t, nvml.SUCCESS, ret)
	insts, err := ApplyMIGLayout(g, g.Config.Name, []string{"3g"}, nil, zap.NewNop())
	require.NoError(t, err)
	require.Len(t, insts, 1)
	require.GreaterOrEqual(t, insts[0].ComputeInstance, 0)
	require.Equal(t, []string{"3g.20gb@0"}, g.layout(), "rebuilt, at the first free placement")
}

func TestApplyMIGRefusesWhenProcessesAreUnknown(t *testing.T) {
	_, g := migManager(t, gpus.A100_SXM4_40GB)
	g.enableMIG(t, [2]int{nvml.GPU_INSTANCE_PROFILE_3_SLICE, 0})
	g.procsErr = nvml.ERROR_NOT_SUPPORTED
	g.migProcsOff = true
	_, err := ApplyMIGLayout(g, g.Config.Name, []string{"7g"}, nil, zap.NewNop())
	require.ErrorIs(t, err, ErrMIGInUse)
	require.ErrorContains(t, err, "NVML cannot tell its processes")
	// Creating beside it destroys nothing, so it is allowed.
	_, err = ApplyMIGLayout(g, g.Config.Name, []string{"3g", "3g"}, nil, zap.NewNop())
	require.NoError(t, err)
	require.Equal(t, []string{"3g.20gb@0", "3g.20gb@4"}, g.layout())

	// Per-instance handles are enough when the whole GPU cannot report.
	g.migProcsOff = false
	_, err = ApplyMIGLayout(g, g.Config.Name, []string{"7g"}, nil, zap.NewNop())
	require.NoError(t, err)
}

func TestApplyMIGUsesThePublishedRules(t *testing.T) {
	// go-nvml's H100 mock lists 3g placements 3 slots wide, so 3g+3g+1g would
	// fit its own table; the H100 does not allow it (3g takes 4 memory slots).
	_, g := migManager(t, gpus.H100_SXM5_80GB)
	_, err := ApplyMIGLayout(g, g.Config.Name, []string{"3g", "3g", "1g"}, nil, zap.NewNop())
	require.ErrorIs(t, err, ErrMIGLayout)
	require.ErrorIs(t, err, migrules.ErrInfeasible)
	require.Empty(t, g.layout())

	insts, err := ApplyMIGLayout(g, g.Config.Name, []string{"3g", "3g"}, nil, zap.NewNop())
	require.NoError(t, err)
	require.Equal(t, []string{"3g.40gb@0", "3g.40gb@4"}, g.layout())
	for _, in := range insts {
		require.Equal(t, 48, in.SMCount) // the mock's SM count per 3g profile
	}
}

func TestApplyMIGNeedsMIGMode(t *testing.T) {
	s, mocks := newServer(t, gpus.A100_SXM4_40GB, 1)
	_, err := ApplyMIGLayout(mocks[0], mocks[0].Config.Name, []string{"7g"}, nil, zap.NewNop())
	require.ErrorIs(t, err, ErrMIGNotEnabled)

	mocks[0].GetMigModeFunc = func() (int, int, nvml.Return) { return 1, 0, nvml.SUCCESS }
	_, err = ApplyMIGLayout(mocks[0], mocks[0].Config.Name, []string{"7g"}, nil, zap.NewNop())
	require.ErrorIs(t, err, ErrMIGNotEnabled, "a pending change to disable MIG")

	mocks[0].GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED }
	_, err = ApplyMIGLayout(mocks[0], mocks[0].Config.Name, []string{"7g"}, nil, zap.NewNop())
	require.ErrorIs(t, err, ErrMIGNotEnabled)
	require.ErrorContains(t, err, "does not support MIG")

	m, err := New(Options{Spec: Spec{Mode: ModeNVIDIA, Backend: BackendNone}, NVML: s})
	require.NoError(t, err)
	defer m.Close(context.Background())
	_, err = m.ApplyMIG("gpu0", []string{"7g"})
	require.ErrorIs(t, err, ErrMIGNotEnabled)
	_, err = m.ApplyMIG("gpu5", []string{"7g"})
	require.ErrorIs(t, err, ErrUnknownDevice)
}

func TestApplyMIGCleansUpAFailedComputeInstance(t *testing.T) {
	_, g := migManager(t, gpus.A100_SXM4_40GB)
	create := g.CreateGpuInstanceWithPlacementFunc
	g.CreateGpuInstanceWithPlacementFunc = func(info *nvml.GpuInstanceProfileInfo, p *nvml.GpuInstancePlacement) (nvml.GpuInstance, nvml.Return) {
		gi, ret := create(info, p)
		gi.(*server.GpuInstance).CreateComputeInstanceFunc = func(*nvml.ComputeInstanceProfileInfo) (nvml.ComputeInstance, nvml.Return) {
			return nil, nvml.ERROR_INSUFFICIENT_RESOURCES
		}
		return gi, ret
	}
	_, err := ApplyMIGLayout(g, g.Config.Name, []string{"7g"}, nil, zap.NewNop())
	require.ErrorIs(t, err, nvml.ERROR_INSUFFICIENT_RESOURCES)
	require.ErrorContains(t, err, "create compute instance in 7g.40gb at 0")
	require.Empty(t, g.layout(), "the GPU instance without a compute instance was destroyed")
}
