package mps

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func testInventory() Inventory {
	return Inventory{Devices: []Device{
		{ID: "gpu0", Kind: KindNVIDIA, Type: "h100-80gb-hbm3", UUID: "GPU-aaaa", Backend: BackendMPS, Sizes: DefaultMPSSizes, MPSPipeDir: "/run/gpuletd/mps/gpu0/pipe"},
		{ID: "gpu1", Kind: KindNVIDIA, Type: "a100-sxm4-40gb", UUID: "GPU-bbbb", Backend: BackendMIG, Sizes: []int{14, 29, 43, 57, 100},
			MIG: &MIGState{Enabled: true, Pending: true, Instances: []MIGInstance{
				{GPUInstance: 1, ComputeInstance: 0, Profile: "3g.20gb", Slices: 3, Size: 43, UUID: "MIG-3g"},
				{GPUInstance: 2, ComputeInstance: -1, Profile: "4g.20gb", Slices: 4, Size: 57, UUID: "MIG-noci"},
			}}},
		{ID: "gpu2", Kind: KindNVIDIA, Type: "tesla-v100", UUID: "GPU-cccc", Backend: BackendNone, Sizes: []int{100}},
		{ID: "cpu", Kind: KindCPU, Type: "cpu", Backend: BackendCPU, Cores: []int{0, 1, 2, 3}, Sizes: []int{25, 50, 75, 100}},
		{ID: "emu0", Kind: KindEmulated, Type: "igniter-v100", Emulated: "igniter-v100", Backend: BackendMPS, MemoryTotal: 16 << 30},
	}}
}

func TestExecutorEnv(t *testing.T) {
	inv := testInventory()
	tests := []struct {
		name    string
		g       Gpulet
		want    []string
		wantErr string
	}{
		{
			name: "mps",
			g:    Gpulet{ID: "a", Device: "gpu0", Size: 40},
			want: []string{
				"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=40", "CUDA_MPS_PIPE_DIRECTORY=/run/gpuletd/mps/gpu0/pipe", "CUDA_VISIBLE_DEVICES=GPU-aaaa",
				"GPULETD_DEVICE=gpu0", "GPULETD_DEVICE_KIND=nvidia", "GPULETD_DEVICE_TYPE=h100-80gb-hbm3", "GPULETD_GPULET_SIZE=40", "GPULETD_PARTITION=mps",
			},
		},
		{
			name: "mps with a pinned memory limit and a size the planner list lacks",
			g:    Gpulet{ID: "a", Device: "gpu0", Size: 33, PinnedMemMB: 4096},
			want: []string{
				"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=33", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=4096M", "CUDA_MPS_PIPE_DIRECTORY=/run/gpuletd/mps/gpu0/pipe", "CUDA_VISIBLE_DEVICES=GPU-aaaa",
				"GPULETD_DEVICE=gpu0", "GPULETD_DEVICE_KIND=nvidia", "GPULETD_DEVICE_TYPE=h100-80gb-hbm3", "GPULETD_GPULET_SIZE=33", "GPULETD_PARTITION=mps",
			},
		},
		{
			name: "mig takes the instance's size",
			g:    Gpulet{ID: "b", Device: "gpu1", MIGInstance: "MIG-3g"},
			want: []string{
				"CUDA_VISIBLE_DEVICES=MIG-3g",
				"GPULETD_DEVICE=gpu1", "GPULETD_DEVICE_KIND=nvidia", "GPULETD_DEVICE_TYPE=a100-sxm4-40gb", "GPULETD_GPULET_SIZE=43", "GPULETD_PARTITION=mig",
			},
		},
		{
			name: "whole GPU",
			g:    Gpulet{ID: "c", Device: "gpu2", Size: 100},
			want: []string{"CUDA_VISIBLE_DEVICES=GPU-cccc", "GPULETD_DEVICE=gpu2", "GPULETD_DEVICE_KIND=nvidia", "GPULETD_DEVICE_TYPE=tesla-v100", "GPULETD_GPULET_SIZE=100", "GPULETD_PARTITION=none"},
		},
		{
			name: "cpu",
			g:    Gpulet{ID: "d", Device: "cpu", Size: 50, Cores: []int{2, 3}},
			want: []string{"CUDA_VISIBLE_DEVICES=", "GPULETD_CPU_CORES=2,3", "GPULETD_DEVICE=cpu", "GPULETD_DEVICE_KIND=cpu", "GPULETD_DEVICE_TYPE=cpu",
				"GPULETD_GPULET_SIZE=50", "GPULETD_INTRA_OP_THREADS=2", "GPULETD_PARTITION=cpu"},
		},
		{
			name: "emulated",
			g:    Gpulet{ID: "e", Device: "emu0", Size: 20},
			want: []string{"CUDA_VISIBLE_DEVICES=", "GPULETD_DEVICE=emu0", "GPULETD_DEVICE_KIND=emulated", "GPULETD_DEVICE_MEMORY_MB=16384", "GPULETD_DEVICE_TYPE=igniter-v100",
				"GPULETD_EMULATED_DEVICE=igniter-v100", "GPULETD_GPULET_SIZE=20", "GPULETD_PARTITION=mps"},
		},
		{name: "unknown device", g: Gpulet{ID: "x", Device: "gpu7", Size: 50}, wantErr: `find device "gpu7"`},
		{name: "mps size 0", g: Gpulet{ID: "x", Device: "gpu0", Size: 0}, wantErr: "size 0: want 1..100"},
		{name: "mps size 101", g: Gpulet{ID: "x", Device: "gpu0", Size: 101}, wantErr: "size 101"},
		{name: "negative memory limit", g: Gpulet{ID: "x", Device: "gpu0", Size: 50, PinnedMemMB: -1}, wantErr: "pinned memory limit"},
		{name: "memory limit off MPS", g: Gpulet{ID: "x", Device: "gpu2", Size: 100, PinnedMemMB: 10}, wantErr: "needs an MPS gpu-let"},
		{name: "whole GPU cut", g: Gpulet{ID: "x", Device: "gpu2", Size: 50}, wantErr: "only 100"},
		{name: "mig without instance", g: Gpulet{ID: "x", Device: "gpu1", Size: 43}, wantErr: "needs its instance"},
		{name: "mig unknown instance", g: Gpulet{ID: "x", Device: "gpu1", MIGInstance: "MIG-zz"}, wantErr: "no MIG instance MIG-zz on gpu1"},
		{name: "mig instance without compute instance", g: Gpulet{ID: "x", Device: "gpu1", MIGInstance: "MIG-noci"}, wantErr: "no MIG instance MIG-noci"},
		{name: "mig wrong size", g: Gpulet{ID: "x", Device: "gpu1", Size: 57, MIGInstance: "MIG-3g"}, wantErr: "size 57: instance MIG-3g (3g.20gb) is 43%"},
		{name: "mig instance on mps", g: Gpulet{ID: "x", Device: "gpu0", Size: 50, MIGInstance: "MIG-3g"}, wantErr: "partitioned with mps"},
		{name: "cpu without cores", g: Gpulet{ID: "x", Device: "cpu", Size: 50}, wantErr: "no cores"},
		{name: "cpu foreign core", g: Gpulet{ID: "x", Device: "cpu", Size: 25, Cores: []int{9}}, wantErr: "core 9 is not one of cpu's cores 0,1,2,3"},
		{name: "cpu cores do not match size", g: Gpulet{ID: "x", Device: "cpu", Size: 50, Cores: []int{1}}, wantErr: "size 50% is 2 core(s) of 4, got 1"},
		{name: "cpu size below a core", g: Gpulet{ID: "x", Device: "cpu", Size: 10, Cores: []int{1}}, wantErr: "maps to no whole core"},
		{name: "cores on a GPU", g: Gpulet{ID: "x", Device: "gpu0", Size: 50, Cores: []int{1}}, wantErr: "cores are for CPU gpu-lets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := inv.ExecutorEnv(tt.g)
			if tt.wantErr != "" {
				require.Error(t, err)
				require.ErrorContains(t, err, tt.wantErr)
				if tt.g.Device != "gpu7" {
					require.ErrorIs(t, err, ErrBadGpulet)
				} else {
					require.ErrorIs(t, err, ErrUnknownDevice)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, env)
		})
	}
}

func TestExecutorEnvMPSWithoutPipeDir(t *testing.T) {
	inv := testInventory()
	inv.Devices[0].MPSPipeDir = ""
	_, err := inv.ExecutorEnv(Gpulet{ID: "a", Device: "gpu0", Size: 50})
	require.ErrorIs(t, err, ErrBadGpulet)
	require.ErrorContains(t, err, "no MPS pipe directory")
}
