package mps

import (
	"math"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
)

func TestDiscover(t *testing.T) {
	tests := []struct {
		name     string
		cfg      gpus.Config
		wantName string
		wantType string
		wantCC   string
		wantMem  uint64
		wantMIG  []string
		sizes    []int
	}{
		{"A100 40GB", gpus.A100_SXM4_40GB, "Mock NVIDIA A100-SXM4-40GB", "mock-a100-sxm4-40gb", "8.0", 40960 << 20,
			[]string{"1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb", "1g.5gb+me", "1g.10gb"}, []int{14, 29, 43, 57, 100}},
		{"H100 80GB", gpus.H100_SXM5_80GB, "NVIDIA H100 80GB HBM3", "h100-80gb-hbm3", "9.0", 81920 << 20,
			[]string{"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb", "1g.10gb+me", "1g.20gb"}, []int{14, 29, 43, 57, 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, mocks := newServer(t, tt.cfg, 2)
			// NVML's "not available" (all bits set) for the second
			// process's memory, as some drivers give for MPS clients.
			mocks[1].setProcs(nvml.ProcessInfo{Pid: 4242, UsedGpuMemory: 1 << 30, GpuInstanceId: noInstance, ComputeInstanceId: noInstance},
				nvml.ProcessInfo{Pid: 4243, UsedGpuMemory: math.MaxUint64, GpuInstanceId: noInstance, ComputeInstanceId: noInstance})
			devs, err := Discover(s, zaptest.NewLogger(t))
			require.NoError(t, err)
			require.Len(t, devs, 2)
			for i, d := range devs {
				require.Equal(t, i, d.Index)
				require.Equal(t, []string{"gpu0", "gpu1"}[i], d.ID)
				require.Equal(t, KindNVIDIA, d.Kind)
				require.Equal(t, tt.wantName, d.Name)
				require.Equal(t, tt.wantType, d.Type)
				require.Equal(t, mocks[i].UUID, d.UUID)
				require.Equal(t, tt.wantCC, d.ComputeCapability)
				require.Equal(t, tt.wantMem, d.MemoryTotal)
				require.Equal(t, tt.wantMem/2, d.MemoryFree)
				require.Equal(t, HealthOK, d.Health)
				require.Equal(t, &Utilization{GPU: 37, Memory: 12}, d.Utilization)
				require.NotNil(t, d.MIG)
				require.False(t, d.MIG.Enabled)
				require.Empty(t, d.MIG.Instances)
				var names []string
				for _, p := range d.MIG.Profiles {
					names = append(names, p.Name)
				}
				require.Equal(t, tt.wantMIG, names)
				require.Equal(t, tt.sizes, migSizes(d.MIG.Profiles))
			}
			require.Empty(t, devs[0].Processes)
			require.Equal(t, []GPUProcess{{PID: 4242, UsedMemory: 1 << 30, GPUInstance: -1, ComputeInstance: -1},
				{PID: 4243, UsedMemory: 0, GPUInstance: -1, ComputeInstance: -1}}, devs[1].Processes, "memory NVML does not have is 0, unknown")
		})
	}
}

func TestDiscoverMIGInstances(t *testing.T) {
	s, mocks := newServer(t, gpus.A100_SXM4_40GB, 1)
	g := mocks[0]
	// 4g at 0, 2g at 4, 1g at 6: a layout the A100 can make.
	g.enableMIG(t, [2]int{nvml.GPU_INSTANCE_PROFILE_4_SLICE, 0}, [2]int{nvml.GPU_INSTANCE_PROFILE_2_SLICE, 4}, [2]int{nvml.GPU_INSTANCE_PROFILE_1_SLICE, 6})
	g.setProcs(nvml.ProcessInfo{Pid: 7, UsedGpuMemory: 100, GpuInstanceId: 1, ComputeInstanceId: 0})

	devs, err := Discover(s, zaptest.NewLogger(t))
	require.NoError(t, err)
	d := devs[0]
	require.True(t, d.MIG.Enabled)
	require.True(t, d.MIG.Pending)
	require.Nil(t, d.Utilization, "NVML reports no utilisation in MIG mode")
	require.Len(t, d.MIG.Instances, 3)
	want := []MIGInstance{
		{GPUInstance: 0, ComputeInstance: 0, Profile: "4g.20gb", ProfileID: nvml.GPU_INSTANCE_PROFILE_4_SLICE, Slices: 4, Size: 57, Start: 0, Span: 4, SMCount: 56, MemoryMB: 19968, UUID: g.migUUID(0, 0)},
		{GPUInstance: 1, ComputeInstance: 0, Profile: "2g.10gb", ProfileID: nvml.GPU_INSTANCE_PROFILE_2_SLICE, Slices: 2, Size: 29, Start: 4, Span: 2, SMCount: 28, MemoryMB: 9856, UUID: g.migUUID(1, 0),
			Processes: []GPUProcess{{PID: 7, UsedMemory: 100, GPUInstance: 1, ComputeInstance: 0}}},
		{GPUInstance: 2, ComputeInstance: 0, Profile: "1g.5gb", ProfileID: nvml.GPU_INSTANCE_PROFILE_1_SLICE, Slices: 1, Size: 14, Start: 6, Span: 1, SMCount: 14, MemoryMB: 4864, UUID: g.migUUID(2, 0)},
	}
	require.Equal(t, want, d.MIG.Instances)
}

func TestDiscoverSurvivesBrokenDevices(t *testing.T) {
	s, mocks := newServer(t, gpus.A100_SXM4_40GB, 2)
	mocks[1].GetNameFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
	mocks[0].GetMigModeFunc = nil // the mock panics: the GPU is listed without MIG state
	mocks[0].GetUtilizationRatesFunc = nil
	devs, err := Discover(s, zaptest.NewLogger(t))
	require.NoError(t, err)
	require.Len(t, devs, 2)
	require.Equal(t, HealthOK, devs[0].Health)
	require.Nil(t, devs[0].MIG)
	require.Nil(t, devs[0].Utilization)
	require.Equal(t, HealthFailed, devs[1].Health)
	require.Contains(t, devs[1].HealthDetail, "ERROR_GPU_IS_LOST")

	// A library whose device count panics gives an error, not a crash.
	_, err = Discover(&mock.Interface{}, zap.NewNop())
	require.ErrorIs(t, err, ErrNVML)
	require.ErrorContains(t, err, "panicked")

	// A handle NVML refuses leaves the device listed as failed.
	s.DeviceGetHandleByIndexFunc = func(int) (nvml.Device, nvml.Return) { return nil, nvml.ERROR_UNKNOWN }
	devs, err = Discover(s, zap.NewNop())
	require.NoError(t, err)
	require.Len(t, devs, 2)
	require.Equal(t, HealthFailed, devs[0].Health)
}

func TestTypeFromName(t *testing.T) {
	for name, want := range map[string]string{
		"NVIDIA H100 80GB HBM3":      "h100-80gb-hbm3",
		"NVIDIA A100-SXM4-40GB":      "a100-sxm4-40gb",
		"Tesla V100-SXM2-16GB":       "tesla-v100-sxm2-16gb",
		"NVIDIA GeForce RTX 3080 Ti": "geforce-rtx-3080-ti",
		"NVIDIA":                     "gpu",
		"":                           "gpu",
	} {
		require.Equal(t, want, TypeFromName(name), name)
	}
}
